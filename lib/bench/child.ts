/**
 * One benchmark child process: a worker of one engine (Fenceline over either transport,
 * graphile-worker, pg-boss, DBOS Transact) or Fenceline's worker-protocol server. The harness
 * (lib/bench/cli.ts) starts it with its role as JSON in FENCELINE_BENCH_CHILD and talks to it
 * over IPC:
 *
 *   child -> harness: ready {port?} · first-start {atMs} · report {statements, handlerCalls, samplesMs}
 *   harness -> child: report · stop
 *
 * Every `pg` query this process sends is counted (statements per step, whatever the engine), and
 * handlers stamp their start on the epoch clock so the harness can measure enqueue-to-start
 * latency across processes. Benchmark support only.
 */
import { createServer } from "node:http";
import pg from "pg";
import { DBOS_APPLICATION, DBOS_WORKFLOW, epochMs, SENT_AT, type ChildMessage, type ChildRole, type HarnessMessage } from "./child-protocol";
import { dbos, graphileWorker, pgBoss, peersPg, type GraphileWorker } from "./peers";

let statements = 0;
/** Set by the roles that speak the HTTP worker protocol. */
let protocolTimings: import("@/lib/worker/protocol-timings").ProtocolTimings | null = null;
let handlerCalls = 0;
const samplesMs: number[] = [];

/**
 * Counts every query sent through this `pg`'s clients. Fenceline's is the repository's `pg`; the
 * peers send through their package's own copy (lib/bench/peers), patched when a peer's role starts,
 * before the peer creates a client.
 */
function countStatements(module: typeof pg): void {
  const originalQuery = module.Client.prototype.query;
  module.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    statements += 1;
    return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof originalQuery;
}
countStatements(pg);

async function countPeerStatements(): Promise<void> {
  const peers = await peersPg();
  if (peers.Client !== pg.Client) countStatements(peers);
}

/** Called at every handler entry: the first one is the start of the throughput window. */
function handlerStarted(payload: unknown): void {
  const now = epochMs();
  handlerCalls += 1;
  if (handlerCalls === 1) send({ type: "first-start", atMs: now });
  const sentAt = (payload as Record<string, unknown> | null | undefined)?.[SENT_AT];
  if (typeof sentAt === "number") samplesMs.push(now - sentAt);
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function startFencelineWorker(role: Extract<ChildRole, { role: "fenceline-worker" }>): Promise<() => Promise<void>> {
  // Traces when the bench's tracing part sets OTEL_* for this child (lib/bench/tracing.ts); nothing loaded otherwise.
  const { startTelemetry, stopTelemetry } = await import("@/lib/telemetry/start");
  await startTelemetry({ serviceName: "bench-worker" });
  const { createPool } = await import("@/lib/db/pool");
  const { directCoordinator } = await import("@/lib/worker/direct-coordinator");
  const { httpCoordinator } = await import("@/lib/worker/http-coordinator");
  const { ProtocolTimings } = await import("@/lib/worker/protocol-timings");
  const { benchEvent, benchFanChild, benchFanOut, benchTimer, noopWorkflow } = await import("./workflows");
  const { Worker } = await import("@/lib/worker/worker");
  const pool =
    role.transport === "direct" ? createPool(role.databaseUrl, { applicationName: "bench-worker", max: Math.min(20, role.concurrency + 3) }) : null;
  const timings = pool ? null : new ProtocolTimings();
  protocolTimings = timings;
  const coordinator = pool ? directCoordinator(pool) : httpCoordinator({ baseUrl: role.baseUrl!, token: role.token!, timings: timings ?? undefined });
  const worker = new Worker({
    coordinator,
    workflows: [noopWorkflow(handlerStarted), ...(role.waits ? [benchTimer, benchEvent] : []), ...(role.children ? [benchFanOut, benchFanChild] : [])],
    concurrency: role.concurrency,
    receiptBatchSize: role.receiptBatchSize,
    log: (line) => process.stderr.write(`[bench-worker] ${line}\n`),
  });
  await worker.start();
  return async () => {
    await worker.stop("benchmark over");
    await pool?.end();
    await stopTelemetry();
  };
}

async function startProtocolServer(role: Extract<ChildRole, { role: "protocol-server" }>): Promise<() => Promise<void>> {
  process.env.FENCELINE_WORKER_TOKEN = role.token;
  const { startTelemetry, stopTelemetry } = await import("@/lib/telemetry/start");
  await startTelemetry({ serviceName: "bench-protocol-server" });
  const { createPool } = await import("@/lib/db/pool");
  const { closeWorkerProtocol, workerProtocolListener } = await import("@/lib/api/worker-protocol");
  const { ProtocolTimings } = await import("@/lib/worker/protocol-timings");
  const timings = new ProtocolTimings();
  protocolTimings = timings;
  const pool = createPool(role.databaseUrl, { applicationName: "bench-protocol", max: role.poolMax, sessionConnectionString: role.directUrl });
  // Worker tokens live in the database (stored as their hash); the environment token above serves
  // a protocol that still reads it.
  await installBenchToken(pool, role.token);
  const server = createServer({ keepAliveTimeout: 60_000 }, workerProtocolListener(pool, { timings }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  send({ type: "ready", port: typeof address === "object" && address ? address.port : 0 });
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await closeWorkerProtocol(pool);
    await pool.end();
    await stopTelemetry();
  };
}

async function installBenchToken(pool: import("pg").Pool, token: string): Promise<void> {
  let tokens: typeof import("@/lib/auth/worker-tokens") | null = null;
  try {
    tokens = await import("@/lib/auth/worker-tokens");
  } catch {
    return;
  }
  await tokens.installWorkerToken(pool, "bench-worker", token, "bench");
}

async function startGraphileWorker(role: Extract<ChildRole, { role: "graphile-worker" }>): Promise<() => Promise<void>> {
  await countPeerStatements();
  const graphile = await graphileWorker();
  const runner = await graphile.run({
    connectionString: role.databaseUrl,
    concurrency: role.concurrency,
    noHandleSignals: true,
    taskList: {
      noop: async (payload) => {
        handlerStarted(payload);
      },
    },
    preset:
      role.localQueueSize === undefined
        ? {}
        : { worker: { localQueue: { size: role.localQueueSize }, completeJobBatchDelay: 0 } },
    logger: quietGraphileLogger(graphile),
  });
  return () => runner.stop();
}

function quietGraphileLogger(module: typeof GraphileWorker) {
  return new module.Logger(() => (level, message) => {
    if (level === "error") process.stderr.write(`[graphile-worker] ${message}\n`);
  });
}

async function startPgBossWorker(role: Extract<ChildRole, { role: "pgboss-worker" }>): Promise<() => Promise<void>> {
  await countPeerStatements();
  const { PgBoss } = await pgBoss();
  const boss = new PgBoss({ connectionString: role.databaseUrl, schedule: false, migrate: false });
  boss.on("error", (error: unknown) => process.stderr.write(`[pg-boss] ${String(error)}\n`));
  await boss.start();
  await boss.work<Record<string, unknown>>(
    role.queue,
    { localConcurrency: role.localConcurrency, batchSize: role.batchSize, burstWhenBatchFull: role.batchSize > 1 },
    async (jobs) => {
      for (const job of jobs) handlerStarted(job.data);
    },
  );
  return () => boss.stop({ graceful: true, timeout: 10_000 });
}

async function startDbosWorker(role: Extract<ChildRole, { role: "dbos-worker" }>): Promise<() => Promise<void>> {
  await countPeerStatements();
  const { DBOS } = await dbos();
  DBOS.setConfig({
    name: DBOS_APPLICATION,
    systemDatabaseUrl: role.databaseUrl,
    // One executor per process, as DBOS asks of a self-hosted fleet: at launch an executor
    // recovers the pending workflows of its ID, which would be its sibling's with a shared one.
    executorID: `bench-${process.pid}`,
    systemDatabasePoolSize: role.poolSize,
    // The harness migrated the system database already.
    runMigrations: false,
    logLevel: "warn",
  });
  // One step, as Fenceline's bench workflow has: DBOS records the step's output, then the workflow's.
  const noop = async (payload: unknown) => {
    await DBOS.runStep(async () => handlerStarted(payload), { name: "only" });
  };
  DBOS.registerWorkflow(noop, { name: DBOS_WORKFLOW });
  await DBOS.launch();
  return () => DBOS.shutdown({ workflowCompletionTimeoutMS: 10_000 });
}

async function main(): Promise<void> {
  const raw = process.env.FENCELINE_BENCH_CHILD;
  if (!raw) throw new Error("FENCELINE_BENCH_CHILD is not set: this module is started by lib/bench/cli.ts");
  const role = JSON.parse(raw) as ChildRole;
  const stop =
    role.role === "fenceline-worker"
      ? await startFencelineWorker(role)
      : role.role === "protocol-server"
        ? await startProtocolServer(role)
        : role.role === "graphile-worker"
          ? await startGraphileWorker(role)
          : role.role === "dbos-worker"
            ? await startDbosWorker(role)
            : await startPgBossWorker(role);
  if (role.role !== "protocol-server") send({ type: "ready" });
  process.on("message", (message: HarnessMessage) => {
    if (message.type === "report") send({ type: "report", statements, handlerCalls, samplesMs: samplesMs.splice(0), protocolTimings: protocolTimings?.take() ?? null });
    if (message.type === "stop") {
      void stop()
        .catch((error: unknown) => process.stderr.write(`[bench-child] stop: ${String(error)}\n`))
        .finally(() => process.exit(0));
    }
  });
  // The harness going away ends the child too: no orphaned workers polling a dropped database.
  process.on("disconnect", () => process.exit(0));
}

await main();
