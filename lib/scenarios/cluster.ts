/**
 * Databases for scenario cells. Every cell gets a fresh engine database (cloned from the migrated
 * template) and a separate, empty database for the destination service, which stands for
 * someone else's system. The database-restart cell needs a server it may restart, so it gets a
 * throwaway PostgreSQL cluster of its own (initdb + pg_ctl from the system's PostgreSQL 15), never
 * the machine's shared server.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { withDatabase } from "@/lib/db/database";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { TEMPLATE_DATABASE, TEMPLATE_LOCK_KEY, withAdmin } from "@/lib/db/test-template";
import { freePort } from "@/lib/net/free-port";

const execFileAsync = promisify(execFile);

/** Where the system's PostgreSQL binaries live (Debian's postgresql-15). */
export const PG_BIN = process.env.FENCELINE_SCENARIO_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export type CellDatabases = {
  /** The engine's database: workers, checker. */
  engineUrl: string;
  /** The destination service's database (schema `destination`). */
  destinationUrl: string;
  drop(): Promise<void>;
};

const newName = (label: string) => `fl_scn_${label}_${process.pid}_${randomBytes(3).toString("hex")}`;

/** A clone of the migrated template on `serverUrl` (the server's `postgres` database URL). */
export async function cloneEngineDatabase(serverUrl: string, label: string): Promise<string> {
  const name = newName(label);
  await withAdmin(serverUrl, async (admin) => {
    await admin.query("SELECT pg_advisory_lock_shared($1)", [TEMPLATE_LOCK_KEY]);
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(TEMPLATE_DATABASE)}`);
    } finally {
      await admin.query("SELECT pg_advisory_unlock_shared($1)", [TEMPLATE_LOCK_KEY]);
    }
  });
  return withDatabase(serverUrl, name);
}

export async function createEmptyDatabase(serverUrl: string, label: string): Promise<string> {
  const name = newName(label);
  await withAdmin(serverUrl, (admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  return withDatabase(serverUrl, name);
}

export async function dropDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await withAdmin(url, (admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
}

/** Engine database cloned from the template, destination database empty, both on `serverUrl`. */
export async function cellDatabases(serverUrl: string, label: string, engineServerUrl = serverUrl): Promise<CellDatabases> {
  const engineUrl =
    engineServerUrl === serverUrl ? await cloneEngineDatabase(serverUrl, label) : await migratedDatabase(engineServerUrl, label);
  const destinationUrl = await createEmptyDatabase(serverUrl, `${label}_dst`);
  return {
    engineUrl,
    destinationUrl,
    drop: async () => {
      await Promise.allSettled([dropDatabase(engineUrl), dropDatabase(destinationUrl)]);
    },
  };
}

/** A fresh database with the migrations applied (for servers that have no template). */
export async function migratedDatabase(serverUrl: string, label: string): Promise<string> {
  const url = await createEmptyDatabase(serverUrl, label);
  await deployMigrations(url);
  return url;
}


/**
 * A PostgreSQL cluster owned by this harness, in a temporary directory, on a free loopback port.
 * As root it runs as the `postgres` OS user (PostgreSQL refuses root).
 */
export class ThrowawayCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly runAs: { uid?: number; gid?: number },
  ) {}

  /** URL of the cluster's `postgres` database. */
  get serverUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDir(): string {
    return path.join(this.dir, "data");
  }

  static async start(): Promise<ThrowawayCluster> {
    if (!existsSync(path.join(PG_BIN, "initdb"))) throw new Error(`no PostgreSQL binaries in ${PG_BIN} (set FENCELINE_SCENARIO_PG_BIN)`);
    const dir = await mkdtemp(path.join(tmpdir(), "fenceline-scenario-pg-"));
    const runAs = await postgresUser();
    if (runAs.uid !== undefined) await chown(dir, runAs.uid, runAs.gid!);
    const cluster = new ThrowawayCluster(dir, await freePort(), runAs);
    try {
      await cluster.exec("initdb", ["-D", cluster.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
      await cluster.pgCtl(["start", "-w", "-t", "60", "-l", path.join(dir, "server.log"), "-o", cluster.serverFlags()]);
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  private serverFlags(): string {
    // fsync off: the machine does not crash in these runs, and a restart stays fast.
    return `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off -c max_connections=200`;
  }

  /** `pg_ctl restart -m <mode>`; with `downMs`, stop, stay down that long, then start. */
  async restart(mode: "fast" | "immediate", downMs = 0): Promise<void> {
    if (downMs <= 0) {
      await this.pgCtl(["restart", "-m", mode, "-w", "-t", "60", "-l", path.join(this.dir, "server.log"), "-o", this.serverFlags()]);
      return;
    }
    await this.pgCtl(["stop", "-m", mode, "-w", "-t", "60"]);
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.pgCtl(["start", "-w", "-t", "60", "-l", path.join(this.dir, "server.log"), "-o", this.serverFlags()]);
  }

  async destroy(): Promise<void> {
    if (existsSync(path.join(this.dataDir, "postmaster.pid"))) {
      await this.pgCtl(["stop", "-m", "immediate", "-w", "-t", "30"]).catch(() => undefined);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** destroy() for an exit hook, where nothing asynchronous runs: stops the server at once and removes its files. */
  destroyNow(): void {
    if (existsSync(path.join(this.dataDir, "postmaster.pid"))) {
      try {
        execFileSync(path.join(PG_BIN, "pg_ctl"), ["-D", this.dataDir, "stop", "-m", "immediate", "-w", "-t", "30"], { ...this.runAs, cwd: this.dir, stdio: "ignore" });
      } catch {
        // Already stopping or gone: the files go either way.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private pgCtl(args: string[]): Promise<void> {
    return this.exec("pg_ctl", ["-D", this.dataDir, ...args]);
  }

  private exec(binary: string, args: string[]): Promise<void> {
    return runPgBinary(binary, args, { ...this.runAs, cwd: this.dir });
  }
}

/** Runs one of PG_BIN's programs (as `runAs`, in `cwd`); its stderr becomes the error's message. */
export async function runPgBinary(binary: string, args: string[], options: { uid?: number; gid?: number; cwd: string }): Promise<void> {
  try {
    await execFileAsync(path.join(PG_BIN, binary), args, { ...options, timeout: 120_000 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`${binary} ${args.join(" ")} failed: ${stderr || String(error)}`, { cause: error });
  }
}

/** As root, PostgreSQL's programs run as the `postgres` OS user (the server refuses root). */
export async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const [uid, gid] = await Promise.all([execFileAsync("id", ["-u", "postgres"]), execFileAsync("id", ["-g", "postgres"])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
