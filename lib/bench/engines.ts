/**
 * The engines side by side, each behind the same small interface: install into a fresh
 * database, enqueue no-op work (in bulk, or one at a time with a start stamp), count what is
 * done, and name the worker processes that run it. Each engine gets its own database on the
 * same PostgreSQL, created afresh for every measurement and dropped after it.
 */
import pg from "pg";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { createPool } from "@/lib/db/pool";
import { benchDraft } from "./workflows";
import { createWorkflows } from "@/lib/engine/workflow";
import { SENT_AT, type ChildRole } from "./child-protocol";
import { spawnChild, type BenchChild } from "./processes";

export type EngineName = "fencelineDirect" | "fencelineHttp" | "graphileDefault" | "graphileTuned" | "pgBoss";

export type EngineSetup = {
  readonly name: EngineName;
  /** Settings as a reader would repeat them. */
  readonly settings: string;
  readonly databaseUrl: string;
  readonly pool: pg.Pool;
  enqueueMany(count: number): Promise<void>;
  enqueueOne(sentAtMs: number): Promise<void>;
  /** Work that has fully concluded, as the database shows it. */
  completed(): Promise<number>;
  /**
   * Starts the engine's worker processes (and first any server they need); resolves when all are
   * ready. `processes` overrides Fenceline's worker process count (the peers' counts are fixed).
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
async function freshDatabase(name: string, { peer = false } = {}): Promise<{ url: string; pool: pg.Pool; drop: () => Promise<void> }> {
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
    enqueueMany: async (count) => {
      // A pool of its own, ended at once: an exiting backend flushes its statistics, so the
      // enqueue's rows are not counted in the run's per-step figures.
      const pool = createPool(db.url, { applicationName: "bench-enqueue", max: 1 });
      try {
        for (let offset = 0; offset < count; offset += ENQUEUE_BATCH) {
          await createWorkflows(pool, Array.from({ length: Math.min(ENQUEUE_BATCH, count - offset) }, (_, i) => benchDraft({ n: offset + i })));
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
  const { makeWorkerUtils } = await import("graphile-worker");
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
  const { PgBoss } = await import("pg-boss");
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
  }
}
