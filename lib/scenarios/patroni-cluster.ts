/**
 * The Patroni tier of the failover cells: a one-member etcd and two Patroni agents, each managing
 * a PostgreSQL 15 data directory (Debian's `patroni` 3.0, `etcd-server` 3.4, PG_BIN's servers),
 * all under one temporary directory on loopback ports. Patroni bootstraps the cluster itself: the
 * first agent runs initdb and takes the leader key, the second makes its replica with
 * pg_basebackup. Nobody promotes by hand: when the leader's machine dies (its Patroni agent and
 * its postmaster SIGKILLed at once), its leader key expires after `ttl` and the replica's agent
 * takes the key and promotes its server.
 *
 * Synchronous: `synchronous_mode: true`, so Patroni names the replica in
 * synchronous_standby_names and promotes only a synchronous standby: no acknowledged commit is
 * lost. Not `synchronous_mode_strict`: with two members it refuses every write on the promoted
 * server until a second member rejoins (tried: a write on the promoted standby waited until
 * killed), and a dead machine does not come back within a cell. Asynchronous: the replica may lag,
 * and `maximum_lag_on_failover` is wide so Patroni still promotes it.
 *
 * As root everything runs as the `postgres` OS user (PostgreSQL refuses root), like the quick
 * tier. The processes are stopped by destroy(), and by an exit hook if the harness ends without it
 * (a SIGINT or SIGTERM ends it through lib/cli/command.ts's exit(), which fires `exit`).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "@/lib/net/free-port";
import { PG_BIN, postgresUser } from "./cluster";
import { waitUntil } from "./processes";
import { alive, killAll, serverProcesses, WalSenderHold, withClient, type FailoverServers } from "./standby-pair";

const execFileAsync = promisify(execFile);

/**
 * Patroni's timing (seconds): a leader key lives `ttl`; the agents loop every `loop_wait`; a DCS or
 * PostgreSQL call is retried for `retry_timeout`. Patroni needs loop_wait + 2 × retry_timeout ≤ ttl,
 * or a leader could lose its key while still retrying. Short, so a cell takes seconds; the
 * retry_timeout is not shorter, so a busy machine's slow etcd write does not demote a healthy leader.
 */
export const PATRONI_TIMING = { ttl: 6, loopWait: 1, retryTimeout: 2 } as const;

const SCOPE = "fenceline";
const MEMBERS = ["pg0", "pg1"] as const;

/**
 * FENCELINE_SCENARIO_PATRONI_PORTS=<base> pins the six ports to base … base+5 (etcd client and peer,
 * the two PostgreSQL servers, the two REST APIs); otherwise free ones.
 */
async function ports(): Promise<number[]> {
  const base = Number(process.env.FENCELINE_SCENARIO_PATRONI_PORTS);
  if (Number.isInteger(base) && base > 0) {
    const pinned = Array.from({ length: 6 }, (_, i) => base + i);
    // They lie in the kernel's range for outgoing connections, where a client socket can hold one for a while.
    await waitUntil(`ports ${base}–${base + 5} to be free`, async () => (await Promise.all(pinned.map(portFree))).every(Boolean), 30_000, 250);
    return pinned;
  }
  const chosen: number[] = [];
  while (chosen.length < 6) {
    const port = await freePort();
    if (!chosen.includes(port)) chosen.push(port);
  }
  return chosen;
}

type Member = { name: string; pgPort: number; restPort: number; agent: ChildProcess | null };

/** Two Patroni agents and a one-member etcd; the first member starts as the leader. */
export class PatroniCluster implements FailoverServers {
  readonly tier = "patroni";
  private etcd: ChildProcess | null = null;
  private readonly held = new WalSenderHold();
  /** Processes killed and seen dead: their ids may be reused by now, never signal them again. */
  private readonly gone = new Set<number>();
  private readonly members: Member[];
  /** The harness ends without destroy(): nothing asynchronous runs in an `exit` hook any more. */
  private readonly cleanupOnExit = () => {
    this.killEverythingNow();
    rmSync(this.dir, { recursive: true, force: true });
  };

  private constructor(
    readonly dir: string,
    readonly synchronous: boolean,
    private readonly etcdPorts: { client: number; peer: number },
    pgPorts: number[],
    restPorts: number[],
    private readonly runAs: { uid?: number; gid?: number },
  ) {
    this.members = MEMBERS.map((name, i) => ({ name, pgPort: pgPorts[i]!, restPort: restPorts[i]!, agent: null }));
  }

  private get leader(): Member {
    return this.members[0]!;
  }

  private get replica(): Member {
    return this.members[1]!;
  }

  get primaryServerUrl(): string {
    return serverUrl(this.leader.pgPort);
  }

  hostList(databaseUrl: string): string {
    const database = new URL(databaseUrl).pathname;
    return `postgresql://postgres@${this.members.map((member) => `127.0.0.1:${member.pgPort}`).join(",")}${database}?target_session_attrs=read-write`;
  }

  private dataDir(member: Member): string {
    return path.join(this.dir, member.name);
  }

  /**
   * Starts the tier; once more, in a fresh directory, if a process exited while starting (it lost
   * a port to another socket between the check and its bind).
   */
  static async start(options: { synchronous: boolean }): Promise<PatroniCluster> {
    try {
      return await PatroniCluster.startOnce(options);
    } catch (error) {
      if (!(error instanceof ExitedWhileStarting)) throw error;
      return PatroniCluster.startOnce(options);
    }
  }

  private static async startOnce(options: { synchronous: boolean }): Promise<PatroniCluster> {
    for (const program of ["patroni", "etcd"]) {
      await execFileAsync("sh", ["-c", `command -v ${program}`]).catch(() => {
        throw new Error(`no ${program} on PATH: apt-get install patroni etcd-server (the Patroni failover cells need both)`);
      });
    }
    const dir = await mkdtemp(path.join(tmpdir(), "fenceline-patroni-"));
    const runAs = await postgresUser();
    if (runAs.uid !== undefined) await chown(dir, runAs.uid, runAs.gid!);
    const [client, peer, pg0, pg1, rest0, rest1] = await ports();
    const cluster = new PatroniCluster(dir, options.synchronous, { client: client!, peer: peer! }, [pg0!, pg1!], [rest0!, rest1!], runAs);
    process.on("exit", cluster.cleanupOnExit);
    try {
      await cluster.startEtcd();
      await cluster.startAgent(cluster.leader);
      await cluster.whileRunning(waitUntil(`Patroni to bootstrap ${cluster.leader.name} as the leader`, () => cluster.isPrimary(cluster.leader), 90_000, 100));
      await cluster.startAgent(cluster.replica);
      await cluster.whileRunning(cluster.waitStreaming());
    } catch (error) {
      const logs = await cluster.logTails();
      await cluster.destroy();
      const message = `${error instanceof Error ? error.message : String(error)}\n${logs}`;
      throw error instanceof ExitedWhileStarting ? new ExitedWhileStarting(message) : new Error(message, { cause: error });
    }
    return cluster;
  }

  /** `waiting`, or an ExitedWhileStarting as soon as etcd or an agent exits. */
  private whileRunning<T>(waiting: Promise<T>): Promise<T> {
    const children = [this.etcd, ...this.members.map((member) => member.agent)].filter((child): child is ChildProcess => child !== null);
    let onExit = () => {};
    const exited = new Promise<never>((_, reject) => {
      onExit = () => {
        const gone = children.find((child) => child.exitCode !== null || child.signalCode !== null);
        reject(new ExitedWhileStarting(`${gone?.spawnargs.slice(0, 2).join(" ") ?? "a process"} exited while the Patroni tier started (code ${gone?.exitCode}, signal ${gone?.signalCode})`));
      };
      for (const child of children) child.once("exit", onExit);
    });
    return Promise.race([waiting, exited]).finally(() => {
      for (const child of children) child.off("exit", onExit);
    });
  }

  /** The last lines of each process's log, for a failed start. */
  private async logTails(lines = 15): Promise<string> {
    const tails = await Promise.all(
      ["etcd", ...MEMBERS].map(async (name) => {
        const text = await readFile(path.join(this.dir, `${name}.log`), "utf8").catch(() => "(no log)");
        return `--- ${name}.log\n${text.trimEnd().split("\n").slice(-lines).join("\n")}`;
      }),
    );
    return tails.join("\n");
  }

  private spawnAs(name: string, command: string, args: string[]): ChildProcess {
    const log = openSync(path.join(this.dir, `${name}.log`), "a");
    try {
      // Its own process group, so a SIGINT to the harness's terminal does not reach it before destroy().
      const child = spawn(command, args, { ...this.runAs, cwd: this.dir, detached: true, stdio: ["ignore", log, log], env: { ...process.env, HOME: this.dir } });
      child.on("error", () => undefined);
      return child;
    } finally {
      closeSync(log);
    }
  }

  private async startEtcd(): Promise<void> {
    const { client, peer } = this.etcdPorts;
    this.etcd = this.spawnAs("etcd", "etcd", [
      "--name", "etcd0",
      "--data-dir", path.join(this.dir, "etcd"),
      "--listen-client-urls", `http://127.0.0.1:${client}`,
      "--advertise-client-urls", `http://127.0.0.1:${client}`,
      "--listen-peer-urls", `http://127.0.0.1:${peer}`,
      "--initial-advertise-peer-urls", `http://127.0.0.1:${peer}`,
      "--initial-cluster", `etcd0=http://127.0.0.1:${peer}`,
      // Debian's Patroni 3.0 has the v2 client (python3-etcd) only, not python3-etcd3.
      "--enable-v2=true",
    ]);
    await this.whileRunning(waitUntil("etcd to answer", () => httpOk(`http://127.0.0.1:${client}/health`), 30_000, 100));
  }

  /** Patroni's configuration of one member (JSON is YAML). */
  private config(member: Member): object {
    const { ttl, loopWait, retryTimeout } = PATRONI_TIMING;
    return {
      scope: SCOPE,
      name: member.name,
      restapi: { listen: `127.0.0.1:${member.restPort}`, connect_address: `127.0.0.1:${member.restPort}` },
      etcd: { host: `127.0.0.1:${this.etcdPorts.client}` },
      bootstrap: {
        dcs: {
          ttl,
          loop_wait: loopWait,
          retry_timeout: retryTimeout,
          // The asynchronous replica is held behind on purpose; Patroni must still promote it.
          maximum_lag_on_failover: 1024 ** 3,
          synchronous_mode: this.synchronous,
          postgresql: {
            use_pg_rewind: false,
            // fsync off: the machine does not crash in these runs; a killed server's writes are in the page cache.
            parameters: { fsync: "off", max_connections: 200, wal_keep_size: "64MB", synchronous_commit: "on" },
          },
        },
        initdb: [{ encoding: "UTF8" }, { auth: "trust" }, { username: "postgres" }],
        pg_hba: ["host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"],
      },
      postgresql: {
        listen: `127.0.0.1:${member.pgPort}`,
        connect_address: `127.0.0.1:${member.pgPort}`,
        data_dir: this.dataDir(member),
        bin_dir: PG_BIN,
        pgpass: path.join(this.dir, `${member.name}.pgpass`),
        authentication: { superuser: { username: "postgres" }, replication: { username: "postgres" } },
        parameters: { unix_socket_directories: this.dir },
      },
    };
  }

  private async startAgent(member: Member): Promise<void> {
    const file = path.join(this.dir, `${member.name}.yml`);
    await writeFile(file, JSON.stringify(this.config(member), null, 2));
    if (this.runAs.uid !== undefined) await chown(file, this.runAs.uid, this.runAs.gid!);
    member.agent = this.spawnAs(member.name, "patroni", [file]);
  }

  private async isPrimary(member: Member): Promise<boolean> {
    return withClient(serverUrl(member.pgPort), async (client) => !(await client.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows[0]!.r).catch(() => false);
  }

  /** The replica streams from the leader (and, synchronous, Patroni has made it the synchronous standby). */
  async waitStreaming(timeoutMs = 90_000): Promise<void> {
    await waitUntil(
      `${this.replica.name} to stream${this.synchronous ? " synchronously" : ""}`,
      () =>
        withClient(this.primaryServerUrl, async (client) => {
          const { rows } = await client.query<{ sync_state: string }>(
            `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`,
            [this.replica.name],
          );
          return rows.some((row) => (this.synchronous ? row.sync_state === "sync" : true));
        }).catch(() => false),
      timeoutMs,
      100,
    );
  }

  /** The leader's machine dies: its Patroni agent, its postmaster and every backend SIGKILLed at once. */
  async killPrimary(): Promise<void> {
    const agent = this.leader.agent?.pid;
    const pids = [...(agent ? [agent] : []), ...(await serverProcesses(this.dataDir(this.leader)))];
    await killAll(pids, "the leader's processes");
    for (const pid of pids) this.gone.add(pid);
  }

  async holdReplication(hold: boolean): Promise<void> {
    await this.held.set(hold, this.primaryServerUrl, this.replica.name);
  }

  async standbyReceivedLsn(): Promise<string> {
    return withClient(serverUrl(this.replica.pgPort), async (client) => {
      const { rows } = await client.query<{ lsn: string }>("SELECT pg_last_wal_receive_lsn()::text AS lsn");
      return rows[0]!.lsn;
    });
  }

  /** Nothing to do but wait: Patroni's agent promotes the replica once the leader key has expired. Polled every 20 ms. */
  async promote(): Promise<void> {
    await waitUntil("Patroni to promote the replica", () => this.isPrimary(this.replica), 60_000, 20);
  }

  async destroy(): Promise<void> {
    await this.holdReplication(false).catch(() => undefined);
    this.killEverythingNow();
    await waitUntil("the Patroni tier's processes to stop", async () => this.pids().every((pid) => !alive(pid)), 15_000, 50).catch(() => undefined);
    process.off("exit", this.cleanupOnExit);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Every process of the tier still known: agents (their process groups), postmasters, etcd. */
  private pids(): number[] {
    const pids: number[] = [];
    for (const member of this.members) {
      if (member.agent?.pid) pids.push(member.agent.pid);
      const pidFile = path.join(this.dataDir(member), "postmaster.pid");
      if (existsSync(pidFile)) {
        const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
        if (postmaster > 0) pids.push(postmaster);
      }
    }
    if (this.etcd?.pid) pids.push(this.etcd.pid);
    return pids.filter((pid) => !this.gone.has(pid));
  }

  /**
   * SIGKILL, synchronous (it also runs in the `exit` hook): the agents first, so none restarts its
   * server; a postmaster's backends exit when it dies. Nothing here needs to survive a clean stop.
   */
  private killEverythingNow(): void {
    for (const pid of this.pids()) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // not a group leader, or already gone
        }
      }
    }
  }
}

/** etcd or a Patroni agent ended while the tier was starting. */
class ExitedWhileStarting extends Error {}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

const serverUrl = (port: number) => `postgresql://postgres@127.0.0.1:${port}/postgres`;

async function httpOk(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}
