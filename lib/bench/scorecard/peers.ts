/**
 * Every use the scorecard makes of the bench's peer packages — graphile-worker, pg-boss and DBOS
 * Transact — on both sides: the harness's (install into a fresh database, enqueue, read each job's
 * state from the engine's own tables) and the worker's (run the job with the engine's retries and
 * hand the effect call to `deliver`). They are reached here only, the way lib/bench/engines.ts
 * reaches them, so they can be re-pointed in one place.
 *
 * Each peer is used as its own documentation recommends for a job with a side effect (the pages
 * are cited in docs/benchmarks/scorecard.md):
 *
 *   graphile-worker  a task with the default retries (25 attempts, exponential back-off); the job
 *                    id is the idempotency key, `job.attempts` (incremented each time the job is
 *                    locked) the term a fenced destination checks
 *   pg-boss          a queue whose expireInSeconds fits the job's normal run (a call with a 5 s
 *                    timeout: 10 s), the default retries (retryLimit 2), supervision every second;
 *                    the job id is the key, `retryCount + 1` (one more each time the job is claimed
 *                    again) the term
 *   DBOS Transact    a queued workflow whose one step makes the call with step retries on; the
 *                    workflow id is the key; each worker has a stable executor ID, so a restarted
 *                    process recovers its own pending workflows; the step's attempt is the term
 */
import { dbos, graphileWorker as loadGraphileWorker, peerVersions as installedPeerVersions, pgBoss, type Dbos } from "../peers";
import type pg from "pg";
import { createPool } from "@/lib/db/pool";
import { migrateDbos } from "../engines";
import type { Contract } from "@/lib/scenarios/types";
import type { EngineOutcome, LogicalJob } from "./types";

export type PeerEngine = "graphileWorker" | "pgBoss" | "dbos";

/** The installed version of each peer package, for the result. */
export async function peerVersionsByPackage(): Promise<Record<string, string>> {
  const versions = await installedPeerVersions();
  return { "graphile-worker": versions.graphileWorker, "pg-boss": versions.pgBoss, "@dbos-inc/dbos-sdk": versions.dbos };
}

/** What a peer's job carries: enough for the worker to make the call. */
export type PeerJobData = { readonly contract: Contract; readonly n: number; readonly payload: LogicalJob["payload"] };

/** One effect call as a peer's handler makes it. */
export type Delivery = (call: { data: PeerJobData; key: string; term: number; signal?: AbortSignal }) => Promise<void>;

/** The harness's handle on a peer installed in a fresh database. */
export type PeerHarness = {
  /** Settings as a reader would repeat them. */
  readonly settings: string;
  /** Enqueues the jobs; answers each job's id in the engine (its idempotency key). */
  enqueue(jobs: readonly LogicalJob[]): Promise<Map<number, string>>;
  /** Each job's state as the engine's own tables show it. */
  outcomes(ids: ReadonlyMap<number, string>): Promise<Map<number, EngineOutcome>>;
  close(): Promise<void>;
};

const QUEUE = "scorecard";
const TASK = "deliver";
const DBOS_APPLICATION = "fenceline-scorecard";
const DBOS_WORKFLOW = "scorecard";
/** pg-boss: a job runs one call with a 5 s timeout, so 10 s is its normal run with room to spare. */
const PG_BOSS_EXPIRE_S = 10;
/** pg-boss: how often a worker's supervisor looks for expired jobs (the default is 60 s). */
const PG_BOSS_SUPERVISE_S = 1;

export const PEER_SETTINGS: Record<PeerEngine, (concurrency: number) => string> = {
  graphileWorker: (c) => `task with default retries (max_attempts 25, exponential back-off), concurrency ${c}; key: job id; term: job.attempts`,
  pgBoss: (c) =>
    `queue with expireInSeconds ${PG_BOSS_EXPIRE_S}, retryLimit 2 (default), supervise and monitor every ${PG_BOSS_SUPERVISE_S} s, localConcurrency ${c}; key: job id; term: retryCount + 1`,
  dbos: (c) => `queued workflow, one step with retriesAllowed (maxAttempts 3, interval 1 s, backoff 2), workerConcurrency ${c}, one executor ID per worker; key: workflow id; term: step attempt`,
};

function peerPool(url: string, name: string): pg.Pool {
  return createPool(url, { applicationName: `scorecard-${name}`, max: 2, schema: null });
}

/** Enqueues one job at a time with `add`, which answers the job's id in the engine. */
async function enqueueEach(jobs: readonly LogicalJob[], add: (data: PeerJobData, job: LogicalJob) => Promise<string>): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  for (const job of jobs) ids.set(job.n, await add({ contract: job.contract, n: job.n, payload: job.payload }, job));
  return ids;
}

/** Each job's outcome from the engine's row for its id (`sql` answers `id` and `state` for `$1`, the ids; `classify` gets undefined for a job without a row). */
async function outcomesOf(
  pool: pg.Pool,
  sql: string,
  ids: ReadonlyMap<number, string>,
  classify: (state: string | undefined) => EngineOutcome,
): Promise<Map<number, EngineOutcome>> {
  const { rows } = await pool.query<{ id: string; state: string }>(sql, [[...ids.values()]]);
  const stateOf = new Map(rows.map((row) => [row.id, row.state]));
  return new Map([...ids].map(([n, id]) => [n, classify(stateOf.get(id))]));
}

/** Installs `engine` into the fresh database at `url` and opens the harness's handle on it. */
export async function openPeer(engine: PeerEngine, url: string, concurrency: number): Promise<PeerHarness> {
  switch (engine) {
    case "graphileWorker":
      return openGraphile(url, concurrency);
    case "pgBoss":
      return openPgBoss(url, concurrency);
    case "dbos":
      return openDbos(url, concurrency);
  }
}

async function openGraphile(url: string, concurrency: number): Promise<PeerHarness> {
  const { makeWorkerUtils } = await loadGraphileWorker();
  const pool = peerPool(url, "graphile");
  const utils = await makeWorkerUtils({ pgPool: pool });
  await utils.migrate();
  return {
    settings: PEER_SETTINGS.graphileWorker(concurrency),
    enqueue: (jobs) => enqueueEach(jobs, async (data) => (await utils.addJob(TASK, data)).id),
    // A job that succeeded is deleted; one that failed for good keeps its row, unlocked, with every attempt spent.
    outcomes: (ids) =>
      outcomesOf(
        pool,
        `SELECT id::text, CASE WHEN attempts >= max_attempts AND locked_at IS NULL THEN 'failed' ELSE 'waiting' END AS state
           FROM graphile_worker._private_jobs WHERE id = ANY($1::bigint[])`,
        ids,
        (state) => (state === undefined ? "completed" : state === "failed" ? "withPerson" : "unsettled"),
      ),
    close: async () => {
      await utils.release();
      await pool.end();
    },
  };
}

async function openPgBoss(url: string, concurrency: number): Promise<PeerHarness> {
  const { PgBoss } = await pgBoss();
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
  boss.on("error", (error: unknown) => process.stderr.write(`[pg-boss] ${String(error)}\n`));
  await boss.start();
  await boss.createQueue(QUEUE, { expireInSeconds: PG_BOSS_EXPIRE_S });
  const pool = peerPool(url, "pgboss");
  return {
    settings: PEER_SETTINGS.pgBoss(concurrency),
    enqueue: (jobs) =>
      enqueueEach(jobs, async (data, job) => {
        const id = await boss.send(QUEUE, data);
        if (!id) throw new Error(`pg-boss refused job ${job.n}`);
        return id;
      }),
    outcomes: (ids) =>
      outcomesOf(pool, `SELECT id::text, state::text FROM pgboss.job WHERE id = ANY($1::uuid[])`, ids, (state) =>
        state === "completed" ? "completed" : state === "failed" || state === "cancelled" ? "withPerson" : "unsettled",
      ),
    close: async () => {
      await pool.end();
      await boss.stop({ graceful: false });
    },
  };
}

/** DBOS's client logs to stdout by default; the harness keeps stdout for its result. */
const dbosLogger: Dbos.DLogger = {
  info: () => undefined,
  debug: () => undefined,
  warn: (entry) => process.stderr.write(`[dbos] ${String(entry)}\n`),
  error: (entry) => process.stderr.write(`[dbos] ${String(entry)}\n`),
};

async function openDbos(url: string, concurrency: number): Promise<PeerHarness> {
  const { DBOSClient } = await dbos();
  await migrateDbos(url);
  const clientPool = createPool(url, { applicationName: "scorecard-dbos-client", max: 2, schema: null });
  const client = await DBOSClient.create({ systemDatabaseUrl: url, systemDatabasePool: clientPool, applicationName: DBOS_APPLICATION, logger: dbosLogger });
  await client.registerQueue(QUEUE, { workerConcurrency: concurrency, onConflict: "always_update" });
  const pool = peerPool(url, "dbos");
  return {
    settings: PEER_SETTINGS.dbos(concurrency),
    enqueue: (jobs) =>
      enqueueEach(jobs, async (data, job) => {
        // The workflow id is the idempotency key DBOS's docs recommend; the harness chooses it.
        const workflowID = `scorecard-job-${job.n}`;
        await client.enqueue({ queueName: QUEUE, workflowName: DBOS_WORKFLOW, workflowID }, data);
        return workflowID;
      }),
    outcomes: (ids) =>
      outcomesOf(pool, `SELECT workflow_uuid AS id, status AS state FROM dbos.workflow_status WHERE workflow_uuid = ANY($1)`, ids, (status) =>
        status === "SUCCESS" ? "completed" : status === "ERROR" || status === "MAX_RECOVERY_ATTEMPTS_EXCEEDED" || status === "CANCELLED" ? "withPerson" : "unsettled",
      ),
    close: async () => {
      await pool.end();
      await client.destroy();
      await clientPool.end();
    },
  };
}

/** A peer worker process's settings (lib/bench/scorecard/peer-worker.ts reads them from its environment). */
export type PeerWorkerOptions = {
  readonly engine: PeerEngine;
  readonly databaseUrl: string;
  /** The worker's place in the fleet; a restarted worker keeps it (DBOS: its executor ID). */
  readonly slot: string;
  readonly concurrency: number;
};

/** Starts the engine's worker in this process; answers how to stop it gracefully. */
export async function startPeerWorker(options: PeerWorkerOptions, deliver: Delivery): Promise<() => Promise<void>> {
  switch (options.engine) {
    case "graphileWorker":
      return graphileWorkerWorker(options, deliver);
    case "pgBoss":
      return pgBossWorker(options, deliver);
    case "dbos":
      return dbosWorker(options, deliver);
  }
}

async function graphileWorkerWorker(options: PeerWorkerOptions, deliver: Delivery): Promise<() => Promise<void>> {
  const module = await loadGraphileWorker();
  const runner = await module.run({
    connectionString: options.databaseUrl,
    concurrency: options.concurrency,
    noHandleSignals: true,
    taskList: {
      [TASK]: async (payload, helpers) => {
        await deliver({ data: payload as PeerJobData, key: helpers.job.id, term: helpers.job.attempts, signal: helpers.abortSignal });
      },
    },
    logger: new module.Logger(() => (level, message) => {
      if (level === "error" || level === "warning") process.stderr.write(`[graphile-worker] ${message}\n`);
    }),
  });
  // A runner that stops on a fatal error rejects its promise; graphile-worker's own CLI then exits
  // with status 1, and so does this worker (its supervisor starts it again).
  runner.promise.catch((error: unknown) => {
    process.stderr.write(`[graphile-worker] the runner stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
  return () => runner.stop();
}

async function pgBossWorker(options: PeerWorkerOptions, deliver: Delivery): Promise<() => Promise<void>> {
  const { PgBoss } = await pgBoss();
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    migrate: false,
    schedule: false,
    supervise: true,
    superviseIntervalSeconds: PG_BOSS_SUPERVISE_S,
    monitorIntervalSeconds: PG_BOSS_SUPERVISE_S,
  });
  boss.on("error", (error: unknown) => process.stderr.write(`[pg-boss] ${String(error)}\n`));
  await boss.start();
  await boss.work<PeerJobData>(QUEUE, { localConcurrency: options.concurrency }, async ([job]) => {
    await deliver({ data: job!.data, key: job!.id, term: job!.retryCount + 1, signal: job!.signal });
  });
  return () => boss.stop({ graceful: true, timeout: 10_000 });
}

async function dbosWorker(options: PeerWorkerOptions, deliver: Delivery): Promise<() => Promise<void>> {
  const { DBOS } = await dbos();
  DBOS.setConfig({
    name: DBOS_APPLICATION,
    systemDatabaseUrl: options.databaseUrl,
    // Stable per place in the fleet: DBOS recovers a crashed executor's pending workflows when a
    // process with its executor ID starts again.
    executorID: `scorecard-${options.slot}`,
    runMigrations: false,
    logLevel: "warn",
  });
  const workflow = async (data: PeerJobData) => {
    const key = DBOS.workflowID!;
    await DBOS.runStep(() => deliver({ data, key, term: DBOS.stepStatus?.currentAttempt ?? 1 }), { name: TASK, retriesAllowed: true });
  };
  DBOS.registerWorkflow(workflow, { name: DBOS_WORKFLOW });
  await DBOS.launch();
  return () => DBOS.shutdown({ workflowCompletionTimeoutMS: 10_000 });
}
