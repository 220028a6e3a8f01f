/**
 * A PostgreSQL primary and a streaming standby made from it with pg_basebackup, both throwaway
 * clusters of the system's PostgreSQL 15 (PG_BIN) under a temporary directory, for the failover
 * cells. Synchronous: the primary waits for the standby to flush each commit
 * (synchronous_standby_names names it, synchronous_commit = on), so no acknowledged commit can
 * be missing from it. Asynchronous: the primary does not wait, so the standby may lag.
 *
 * The failover is done by hand, as a failover manager would: SIGKILL every process of the
 * primary, then `pg_ctl promote` the standby. Processes find the promoted standby through a
 * connection string that lists both hosts with target_session_attrs=read-write (lib/db/host-list.ts).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "@/lib/net/free-port";
import { PG_BIN, postgresUser, runPgBinary } from "./cluster";
import { waitUntil } from "./processes";

const execFileAsync = promisify(execFile);

/** The standby's application_name, which synchronous_standby_names names. */
const STANDBY_NAME = "fl_standby";

/** FENCELINE_SCENARIO_FAILOVER_PORTS="primary,standby" pins the two ports; otherwise free ones. */
async function ports(): Promise<[number, number]> {
  const pinned = process.env.FENCELINE_SCENARIO_FAILOVER_PORTS?.split(",").map(Number);
  if (pinned?.length === 2 && pinned.every((port) => Number.isInteger(port) && port > 0)) return [pinned[0]!, pinned[1]!];
  return [await freePort(), await freePort()];
}

/**
 * A primary and a streaming standby the failover cells can kill and fail over: the quick tier
 * (StandbyPair, `pg_ctl promote` by hand) and the Patroni tier (patroni-cluster.ts, Patroni's own
 * leader election over etcd).
 */
export interface FailoverServers {
  /** Which tier: shown in the cell's figures and the bench row. */
  readonly tier: "quick" | "patroni";
  readonly synchronous: boolean;
  /** URL of the primary's `postgres` database (where cell databases are created). */
  readonly primaryServerUrl: string;
  /** `databaseUrl` (on the primary) as a host list of both servers, read-write only. */
  hostList(databaseUrl: string): string;
  /** SIGSTOP (true) or SIGCONT (false) the primary's WAL sender to the standby. */
  holdReplication(hold: boolean): Promise<void>;
  /** The last WAL position the standby received. */
  standbyReceivedLsn(): Promise<string>;
  /** SIGKILL the primary as a dead machine would stop: no shutdown, no last WAL sent. */
  killPrimary(): Promise<void>;
  /** Resolves once the standby has left recovery and takes writes. */
  promote(): Promise<void>;
  /** Stops every process and removes the temporary directory. */
  destroy(): Promise<void>;
}

/** The quick tier: a pg_basebackup standby that the harness promotes with `pg_ctl promote`. */
export class StandbyPair implements FailoverServers {
  readonly tier = "quick";
  private primaryAlive = true;
  private readonly held = new WalSenderHold();

  private constructor(
    readonly dir: string,
    readonly synchronous: boolean,
    readonly primaryPort: number,
    readonly standbyPort: number,
    private readonly runAs: { uid?: number; gid?: number },
  ) {}

  /** URL of the primary's `postgres` database (where cell databases are created). */
  get primaryServerUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.primaryPort}/postgres`;
  }

  get standbyServerUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.standbyPort}/postgres`;
  }

  /** `databaseUrl` (on the primary) as a host list of both servers, read-write only. */
  hostList(databaseUrl: string): string {
    const database = new URL(databaseUrl).pathname;
    return `postgresql://postgres@127.0.0.1:${this.primaryPort},127.0.0.1:${this.standbyPort}${database}?target_session_attrs=read-write`;
  }

  private dataDir(which: "primary" | "standby"): string {
    return path.join(this.dir, which);
  }

  static async start(options: { synchronous: boolean }): Promise<StandbyPair> {
    if (!existsSync(path.join(PG_BIN, "pg_basebackup"))) throw new Error(`no pg_basebackup in ${PG_BIN} (set FENCELINE_SCENARIO_PG_BIN)`);
    const dir = await mkdtemp(path.join(tmpdir(), "fenceline-failover-pg-"));
    const runAs = await postgresUser();
    if (runAs.uid !== undefined) await chown(dir, runAs.uid, runAs.gid!);
    const [primaryPort, standbyPort] = await ports();
    const pair = new StandbyPair(dir, options.synchronous, primaryPort, standbyPort, runAs);
    try {
      await pair.exec("initdb", ["-D", pair.dataDir("primary"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
      await pair.startServer("primary");
      await pair.exec("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", pair.dataDir("standby"), "-R", "-X", "stream", "--no-sync"]);
      // After -R's own line, so this one wins: it names the standby for synchronous_standby_names.
      await appendFile(
        path.join(pair.dataDir("standby"), "postgresql.auto.conf"),
        `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=${STANDBY_NAME}'\n`,
      );
      await pair.startServer("standby");
      await pair.waitStreaming();
    } catch (error) {
      await pair.destroy();
      throw error;
    }
    return pair;
  }

  private serverFlags(which: "primary" | "standby"): string {
    const port = which === "primary" ? this.primaryPort : this.standbyPort;
    // fsync off: the machine does not crash in these runs; a killed server's writes are in the page cache.
    const common = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off -c max_connections=200 -c wal_level=replica -c max_wal_senders=4 -c wal_keep_size=64MB`;
    if (which === "standby" || !this.synchronous) return common;
    return `${common} -c synchronous_standby_names=${STANDBY_NAME} -c synchronous_commit=on`;
  }

  private async startServer(which: "primary" | "standby"): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.dataDir(which), "start", "-w", "-t", "60", "-l", path.join(this.dir, `${which}.log`), "-o", this.serverFlags(which)]);
  }

  /** The standby streams from the primary (and, synchronous, is the one commits wait for). */
  async waitStreaming(timeoutMs = 30_000): Promise<void> {
    await withClient(this.primaryServerUrl, (client) =>
      waitUntil(
        `the standby to stream${this.synchronous ? " synchronously" : ""}`,
        async () => {
          const { rows } = await client.query<{ sync_state: string }>(
            `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`,
            [STANDBY_NAME],
          );
          return rows.some((row) => (this.synchronous ? row.sync_state === "sync" : true));
        },
        timeoutMs,
      ),
    );
  }

  /** SIGKILL the primary's postmaster and every one of its processes at once: no shutdown, no last WAL sent. */
  async killPrimary(): Promise<void> {
    const pids = await serverProcesses(this.dataDir("primary"));
    this.primaryAlive = false;
    await killAll(pids, "the primary's processes");
  }

  /**
   * SIGSTOP (or SIGCONT) the primary's WAL sender: commits go on, acknowledged (asynchronous),
   * and stay on the primary. Stopping the standby's receiver instead loses nothing: what the
   * sender wrote meanwhile waits in the socket's buffers and is read on SIGCONT.
   */
  async holdReplication(hold: boolean): Promise<void> {
    await this.held.set(hold, this.primaryServerUrl, STANDBY_NAME);
  }

  /** The last WAL position the standby received (before promotion: what the failover keeps). */
  async standbyReceivedLsn(): Promise<string> {
    return withClient(this.standbyServerUrl, async (client) => {
      const { rows } = await client.query<{ lsn: string }>("SELECT pg_last_wal_receive_lsn()::text AS lsn");
      return rows[0]!.lsn;
    });
  }

  /**
   * `pg_ctl promote`: the standby ends recovery and takes writes on a new timeline. Polled here
   * every 20 ms rather than with `-w`, whose one-second wait steps would be most of the pause.
   */
  async promote(): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.dataDir("standby"), "promote", "-W"]);
    await withClient(this.standbyServerUrl, (client) =>
      waitUntil("the standby to leave recovery", async () => !(await client.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows[0]!.r, 60_000, 20),
    );
  }

  async destroy(): Promise<void> {
    // A stopped WAL sender could not act on the shutdown signal.
    await this.holdReplication(false).catch(() => undefined);
    for (const which of ["standby", "primary"] as const) {
      if (which === "primary" && !this.primaryAlive) continue;
      if (existsSync(path.join(this.dataDir(which), "postmaster.pid"))) {
        await this.exec("pg_ctl", ["-D", this.dataDir(which), "stop", "-m", "immediate", "-w", "-t", "30"]).catch(() => undefined);
      }
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  private exec(binary: string, args: string[]): Promise<void> {
    return runPgBinary(binary, args, { ...this.runAs, cwd: this.dir });
  }
}

/** A server's postmaster (from its data directory's postmaster.pid) and its child processes. */
export async function serverProcesses(dataDir: string): Promise<number[]> {
  const postmaster = Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  const { stdout } = await execFileAsync("pgrep", ["-P", String(postmaster)]).catch(() => ({ stdout: "" }));
  return [postmaster, ...stdout.split("\n").filter(Boolean).map(Number)];
}

/** SIGKILLs every one of `pids` at once (a dead machine: no shutdown) and waits until none is alive. */
export async function killAll(pids: readonly number[], what: string): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitUntil(`${what} to die`, async () => pids.every((pid) => !alive(pid)), 10_000, 20);
}

/**
 * Holds a primary's WAL sender to one standby with SIGSTOP, and lets every held one go with
 * SIGCONT: commits go on, acknowledged when asynchronous, and stay on the primary.
 */
export class WalSenderHold {
  private held: number[] = [];

  async set(hold: boolean, primaryServerUrl: string, standbyName: string): Promise<void> {
    if (!hold) {
      for (const pid of this.held) if (alive(pid)) process.kill(pid, "SIGCONT");
      this.held = [];
      return;
    }
    const pid = await withClient(primaryServerUrl, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_replication WHERE application_name = $1", [standbyName]);
      return rows[0]?.pid;
    });
    if (!pid) throw new Error(`the primary has no WAL sender for ${standbyName}`);
    process.kill(pid, "SIGSTOP");
    this.held.push(pid);
  }
}

/** Whether a process of that id exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs `work` on a fresh client of `url`, ended afterwards. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
