import { randomBytes } from "node:crypto";
/**
 * The engines side by side, each behind the same small interface: install into a fresh
 * database, enqueue no-op work (in bulk, or one at a time with a start stamp), count what is
 * done, and name the worker processes that run it. Each engine gets its own database on the
 * same PostgreSQL, created afresh for every measurement and dropped after it.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import pg from "pg";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { createPool } from "@/lib/db/pool";
import { benchDraft } from "./workflows";
import { createWorkflows } from "@/lib/engine/workflow";
import { DBOS_APPLICATION, DBOS_WORKFLOW, SENT_AT, type ChildRole } from "./child-protocol";
import { dbos as loadDbos, dbosCli, graphileWorker, pgBoss as loadPgBoss, type Dbos } from "./peers";
import { spawnChild, type BenchChild } from "./processes";

export type EngineName = "fencelineDirect" | "fencelineHttp" | "graphileDefault" | "graphileTuned" | "pgBoss" | "dbosDefault" | "dbosTuned";

export type EngineSetup = {
  readonly name: EngineName;
  /** Settings as a reader would repeat them. */
  readonly settings: string;
  readonly databaseUrl: string;
  readonly pool: pg.Pool;
  /** `traced`: each request carries a sampled traceparent, as one created inside an app's span does (Fenceline only). */
  enqueueMany(count: number, options?: { readonly traced?: boolean }): Promise<void>;
  enqueueOne(sentAtMs: number): Promise<void>;
  /** Work that has fully concluded, as the database shows it. */
  completed(): Promise<number>;
  /**
   * Starts the engine's worker processes (and first any server they need); resolves when all are
   * ready. `processes` overrides Fenceline's and DBOS's worker process count (the queues' counts
   * are fixed).
   */
  startWorkers(processes?: number): Promise<BenchChild[]>;
  drop(): Promise<void>;
};

const PG_BOSS_QUEUE = "bench";
const BENCH_TOKEN = "fenceline-bench-worker-token";

/**
 * Fenceline's worker settings for throughput: two processes (as many as graphile-worker's tuned
 * variant) claiming up to 50 steps at a time (its local queue is 50); the worker's defaults
 * otherwise. Start latency uses one process, like graphile-worker at defaults.
 */
export const FENCELINE_CONCURRENCY = Number(process.env.FENCELINE_BENCH_CONCURRENCY ?? 50);
export const FENCELINE_PROCESSES = Number(process.env.FENCELINE_BENCH_PROCESSES ?? 2);

/** A peer's harness connections keep the server's search_path: the peers name their own schemas. */
export async function freshDatabase(name: string, { peer = false } = {}): Promise<{ url: string; pool: pg.Pool; drop: () => Promise<void> }> {
  const database = `fl_bench_${name.toLowerCase()}`;
  const { url } = await resolveDatabaseUrl({ database, fresh: true });
  const pool = createPool(url, { applicationName: "bench-harness", max: 4, schema: peer ? null : undefined });
  return {
    url,
    pool,
    drop: async () => {
      await pool.end();
      const admin = new pg.Client({ connectionString: url.replace(/\/[^/?]+(\?|$)/, "/postgres$1") });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

const ENQUEUE_BATCH = 500;

async function fenceline(name: "fencelineDirect" | "fencelineHttp"): Promise<EngineSetup> {
  const db = await freshDatabase(name);
  await deployMigrations(db.url);
  const transport = name === "fencelineDirect" ? "direct" : "http";
  const worker = (baseUrl?: string): ChildRole => ({
    role: "fenceline-worker",
    transport,
    databaseUrl: db.url,
    baseUrl,
    token: BENCH_TOKEN,
    concurrency: FENCELINE_CONCURRENCY,
  });
  return {
    name,
    settings:
      `${FENCELINE_PROCESSES} worker processes (1 for start latency), concurrency ${FENCELINE_CONCURRENCY}, receipt batches of up to 100` +
      (transport === "http" ? "; worker protocol served by node:http in a separate process (loopback)" : ""),
    databaseUrl: db.url,
    pool: db.pool,
    enqueueMany: async (count, options = {}) => {
      // A pool of its own, ended at once: an exiting backend flushes its statistics, so the
      // enqueue's rows are not counted in the run's per-step figures.
      const pool = createPool(db.url, { applicationName: "bench-enqueue", max: 1 });
      const traceParent = () => (options.traced ? `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01` : null);
      try {
        for (let offset = 0; offset < count; offset += ENQUEUE_BATCH) {
          await createWorkflows(pool, Array.from({ length: Math.min(ENQUEUE_BATCH, count - offset) }, (_, i) => ({ ...benchDraft({ n: offset + i }), traceParent: traceParent() })));
        }
      } finally {
        await pool.end();
      }
    },
    enqueueOne: async (sentAtMs) => {
      await createWorkflows(db.pool, [benchDraft({ [SENT_AT]: sentAtMs })]);
    },
    completed: async () => Number((await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM receipt")).rows[0]!.n),
    startWorkers: async (processes = FENCELINE_PROCESSES) => {
      const children: BenchChild[] = [];
      let baseUrl: string | undefined;
      if (transport === "http") {
        const server = spawnChild({ role: "protocol-server", databaseUrl: db.url, token: BENCH_TOKEN, poolMax: 10 });
        children.push(server);
        baseUrl = `http://127.0.0.1:${(await server.ready).port}`;
      }
      for (let i = 0; i < processes; i += 1) children.push(spawnChild(worker(baseUrl)));
      await Promise.all(children.map((child) => child.ready));
      return children;
    },
    drop: db.drop,
  };
}

async function graphile(name: "graphileDefault" | "graphileTuned"): Promise<EngineSetup> {
  const db = await freshDatabase(name, { peer: true });
  const { makeWorkerUtils } = await graphileWorker();
  // Our own pool, ended (and awaited) before the database is dropped: graphile-worker's release()
  // does not wait for the pools it creates itself.
  const utilsPool = createPool(db.url, { applicationName: "bench-graphile-utils", max: 2, schema: null });
  // A checked-out client's error must not become an unhandled 'error' event (graphile-worker checks).
  utilsPool.on("connect", (client) => client.on("error", (error) => process.stderr.write(`[bench] graphile utils client: ${error.message}\n`)));
  const utils = await makeWorkerUtils({ pgPool: utilsPool });
  await utils.migrate();
  const tuned = name === "graphileTuned";
  const role: ChildRole = { role: "graphile-worker", databaseUrl: db.url, concurrency: 10, localQueueSize: tuned ? 50 : undefined };
  // A completed job is deleted: done = enqueued - still present.
  let enqueued = 0;
  return {
    name,
    settings: tuned ? "2 processes, concurrency 10, localQueue.size 50, completeJobBatchDelay 0" : "1 process, concurrency 10, defaults",
    databaseUrl: db.url,
    pool: db.pool,
    enqueueMany: async (count) => {
      for (let offset = 0; offset < count; offset += 20_000) {
        const size = Math.min(20_000, count - offset);
        await utils.addJobs(Array.from({ length: size }, () => ({ identifier: "noop", payload: {} })));
        enqueued += size;
      }
    },
    enqueueOne: async (sentAtMs) => {
      await utils.addJob("noop", { [SENT_AT]: sentAtMs });
      enqueued += 1;
    },
    completed: async () => {
      const { rows } = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM graphile_worker._private_jobs");
      return enqueued - Number(rows[0]!.n);
    },
    startWorkers: async () => {
      const children = Array.from({ length: tuned ? 2 : 1 }, () => spawnChild(role));
      await Promise.all(children.map((child) => child.ready));
      return children;
    },
    drop: async () => {
      await utils.release();
      await utilsPool.end();
      await db.drop();
    },
  };
}

async function pgBoss(): Promise<EngineSetup> {
  const db = await freshDatabase("pgBoss", { peer: true });
  const { PgBoss } = await loadPgBoss();
  const boss = new PgBoss({ connectionString: db.url, supervise: false, schedule: false });
  boss.on("error", (error: unknown) => process.stderr.write(`[pg-boss] ${String(error)}\n`));
  await boss.start();
  await boss.createQueue(PG_BOSS_QUEUE);
  const role: ChildRole = { role: "pgboss-worker", databaseUrl: db.url, queue: PG_BOSS_QUEUE, localConcurrency: 10, batchSize: 10 };
  return {
    name: "pgBoss",
    settings: "1 process, localConcurrency 10, batchSize 10, burstWhenBatchFull",
    databaseUrl: db.url,
    pool: db.pool,
    enqueueMany: async (count) => {
      for (let offset = 0; offset < count; offset += 20_000) {
        const size = Math.min(20_000, count - offset);
        await boss.insert(PG_BOSS_QUEUE, Array.from({ length: size }, () => ({ data: {} })));
      }
    },
    enqueueOne: async (sentAtMs) => {
      await boss.send(PG_BOSS_QUEUE, { [SENT_AT]: sentAtMs });
    },
    completed: async () => {
      const { rows } = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM pgboss.job_common WHERE name = $1 AND state = 'completed'", [PG_BOSS_QUEUE]);
      return Number(rows[0]!.n);
    },
    startWorkers: async () => {
      const child = spawnChild(role);
      await child.ready;
      return [child];
    },
    drop: async () => {
      await boss.stop({ graceful: false });
      await db.drop();
    },
  };
}

const DBOS_QUEUE = "bench";
const DBOS_ENQUEUE_CONNECTIONS = 4;

/**
 * DBOS's settings. Both rows drain with as many processes as Fenceline's direct row. The
 * defaults row also takes its concurrency (workerConcurrency 50) and leaves everything else at
 * DBOS's defaults (queue polling every 1,000 ms, system pool of 10, 3 dispatch lanes): each
 * process then starts at most `workerConcurrency` workflows per poll.
 *
 * Tuned, tried on this machine (2 vCPU shared with seven other engineers' work; 2,000 steps,
 * 2 processes; the ratio to Fenceline's direct row in the same run, one run each):
 *   workerConcurrency / minPollingIntervalMs / systemDatabasePoolSize   DBOS / Fenceline direct
 *   50 / 1,000 / 10 (the defaults row)                                  79/s, (not paired)
 *   50 / 50 / 10                                                        0.12
 *   50 / 10 / 10                                                        0.13
 *   50 / 10 / 25                                                        0.12
 *   100 / 1 / 20                                                        0.12 (and 1,000 polls/s when idle)
 *   200 / 10 / 20                                                       0.14  <- chosen
 *   200 / 10 / 50                                                       0.13
 *   500 / 10 / 50                                                       0.09
 * maxConcurrentQueueDispatches stays at its default: it bounds lanes across queues, and there is
 * one queue. The differences are within the machine's noise (load average 11-25 during these
 * runs); what does not move is the cost per workflow: about 11 statements in 2 transactions
 * (5.5 counted by PostgreSQL, its autocommit reads included), 2.5-3 ms of PostgreSQL CPU and
 * 2-2.5 ms of worker CPU. The polling interval is what the defaults row pays for: a poll starts
 * at most workerConcurrency workflows, so 1,000 ms caps each process at 50 workflows/s.
 */
const DBOS_TUNED = { workerConcurrency: 200, pollingIntervalMs: 10, poolSize: 20 } as const;

/** DBOS's client logs to stdout by default; here its lines go to stderr, with the progress. */
const dbosLogger: Dbos.DLogger = {
  info: (entry) => process.stderr.write(`[dbos] ${String(entry)}\n`),
  debug: () => undefined,
  warn: (entry) => process.stderr.write(`[dbos] ${String(entry)}\n`),
  error: (entry) => process.stderr.write(`[dbos] ${String(entry)}\n`),
};

/**
 * Creates DBOS's system tables out of band, as DBOS documents for a fleet (`dbos schema`), so the
 * workers launch without migrating; its output goes to stderr.
 */
export async function migrateDbos(url: string): Promise<void> {
  const child = spawn(process.execPath, [await dbosCli(), "schema", url], { stdio: ["ignore", 2, 2] });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`dbos schema exited with ${code}`);
}

async function dbos(name: "dbosDefault" | "dbosTuned"): Promise<EngineSetup> {
  const db = await freshDatabase(name, { peer: true });
  const { DBOSClient } = await loadDbos();
  await migrateDbos(db.url);
  const tuned = name === "dbosTuned";
  const workerConcurrency = tuned ? DBOS_TUNED.workerConcurrency : FENCELINE_CONCURRENCY;
  const role: ChildRole = {
    role: "dbos-worker",
    databaseUrl: db.url,
    poolSize: tuned ? DBOS_TUNED.poolSize : undefined,
  };
  // The client DBOS's docs give producers outside the application; the pool is ours, so that
  // ending it flushes the enqueue's statistics before the run's counters are read.
  const clientOn = async (max: number) => {
    const pool = createPool(db.url, { applicationName: "bench-dbos-client", max, schema: null });
    const client = await DBOSClient.create({ systemDatabaseUrl: db.url, systemDatabasePool: pool, applicationName: DBOS_APPLICATION, logger: dbosLogger });
    const end = async () => {
      await client.destroy();
      await pool.end();
    };
    return { client, pool, end };
  };
  // As many connections as the harness's own pool, which Fenceline's single enqueues use.
  const producer = await clientOn(4);
  // The queue's configuration lives in the system database; the workers find it at launch.
  await producer.client.registerQueue(DBOS_QUEUE, {
    workerConcurrency,
    minPollingIntervalMs: tuned ? DBOS_TUNED.pollingIntervalMs : undefined,
    onConflict: "always_update",
  });
  const options = { queueName: DBOS_QUEUE, workflowName: DBOS_WORKFLOW };
  return {
    name,
    settings: tuned
      ? `${FENCELINE_PROCESSES} processes (1 for start latency), workerConcurrency ${workerConcurrency}, minPollingIntervalMs ${DBOS_TUNED.pollingIntervalMs}, ` +
        `systemDatabasePoolSize ${DBOS_TUNED.poolSize}`
      : `${FENCELINE_PROCESSES} processes (1 for start latency), workerConcurrency ${workerConcurrency}, defaults`,
    databaseUrl: db.url,
    pool: db.pool,
    enqueueMany: async (count) => {
      // DBOSClient has no bulk enqueue; enqueueInTransaction lets one transaction carry a batch,
      // and a few connections fill the queue side by side.
      const bulk = await clientOn(DBOS_ENQUEUE_CONNECTIONS);
      let next = 0;
      const fill = async () => {
        const connection = await bulk.pool.connect();
        try {
          for (let offset = next; offset < count; offset = next) {
            next += ENQUEUE_BATCH;
            await connection.query("BEGIN");
            for (let i = offset; i < Math.min(count, offset + ENQUEUE_BATCH); i += 1) await bulk.client.enqueueInTransaction(connection, options, { n: i });
            await connection.query("COMMIT");
          }
        } finally {
          connection.release();
        }
      };
      try {
        await Promise.all(Array.from({ length: DBOS_ENQUEUE_CONNECTIONS }, fill));
      } finally {
        await bulk.end();
      }
    },
    enqueueOne: async (sentAtMs) => {
      await producer.client.enqueue(options, { [SENT_AT]: sentAtMs });
    },
    completed: async () =>
      Number((await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM dbos.workflow_status WHERE queue_name = $1 AND status = 'SUCCESS'", [DBOS_QUEUE])).rows[0]!.n),
    startWorkers: async (processes = FENCELINE_PROCESSES) => {
      const children = Array.from({ length: processes }, () => spawnChild(role));
      await Promise.all(children.map((child) => child.ready));
      return children;
    },
    drop: async () => {
      await producer.end();
      await db.drop();
    },
  };
}

export function setUpEngine(name: EngineName): Promise<EngineSetup> {
  switch (name) {
    case "fencelineDirect":
    case "fencelineHttp":
      return fenceline(name);
    case "graphileDefault":
    case "graphileTuned":
      return graphile(name);
    case "pgBoss":
      return pgBoss();
    case "dbosDefault":
    case "dbosTuned":
      return dbos(name);
  }
}
