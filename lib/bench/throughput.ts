/**
 * Throughput: `steps` no-op steps (or jobs) enqueued in bulk into a fresh database, then the
 * engine's workers started; the window runs from the first handler start to the moment the
 * harness sees the last completion in the database. Alongside: statements per step (every pg
 * query the engine's processes sent), transactions and row writes per step (pg_stat_database
 * deltas), worker CPU per step and each worker process's peak RSS.
 */
import { setUpEngine, type EngineName } from "./engines";
import { httpBreakdown, type HttpBreakdown } from "./http-breakdown";
import { cpuTimeMs } from "./processes";
import { counterDelta, databaseCounters, round, sleep, type DatabaseCounters } from "./stats";

export type ThroughputResult = {
  readonly engine: EngineName;
  readonly settings: string;
  readonly steps: number;
  readonly completed: number;
  readonly stepsPerS: number;
  readonly windowMs: number;
  readonly enqueueMs: number;
  readonly statementsPerStep: number;
  readonly perStep: DatabaseCounters;
  readonly workerCpuMsPerStep: number;
  /** CPU of the PostgreSQL backends serving this database (harness's own polling included), per step. */
  readonly postgresCpuMsPerStep: number;
  /** Peak RSS of each worker process (the protocol server first, over HTTP), MiB. */
  readonly peakRssMb: number[];
  /** Over the HTTP worker protocol: per operation, calls per step and where each call's time went. */
  readonly httpBreakdown: HttpBreakdown | null;
};

const POLL_MS = 25;
const POLLS_PER_WINDOW = 200;

/**
 * `tracing`: the workers (and the protocol server) export their spans to this OTLP/HTTP endpoint,
 * and every request carries a sampled traceparent (lib/bench/tracing.ts).
 */
export async function measureThroughput(engine: EngineName, steps: number, timeoutMs: number, analyze = true, tracing: { readonly endpoint: string } | null = null): Promise<ThroughputResult> {
  const setup = await setUpEngine(engine);
  try {
    const enqueueStarted = performance.now();
    await setup.enqueueMany(steps, { traced: tracing !== null });
    const enqueueMs = performance.now() - enqueueStarted;
    // Every engine's tables get statistics, as autovacuum keeps them in steady state; a freshly
    // filled table has none, and the planner then guesses (see docs/benchmarks/README.md).
    if (analyze) await setup.pool.query("ANALYZE");
    // Backends flush their statistics at most once a second: let the enqueue's arrive first.
    await sleep(1_200);
    const before = await databaseCounters(setup.pool);

    const children = await withEnvironment(tracing ? tracingEnvironment(tracing.endpoint) : {}, () => setup.startWorkers());
    // Start-up (loading and compiling modules) is not work per step.
    const cpuAtReadyMs = children.reduce((sum, child) => sum + child.cpuMs(), 0);
    const backendCpuAtReady = await backendCpu(setup.pool);
    const firstStart = Promise.race(children.map((child) => child.firstStart));
    const pollingFrom = performance.now();
    const deadline = pollingFrom + timeoutMs;
    let completed = 0;
    while (completed < steps && performance.now() < deadline) {
      // Each poll counts rows in the engine's tables on the same server: a long window polled every
      // 25 ms would charge a slower engine for thousands of counts. The interval grows with the
      // window instead, which still places the last completion within 0.5% of it.
      await sleep(Math.max(POLL_MS, (performance.now() - pollingFrom) / POLLS_PER_WINDOW));
      completed = await setup.completed();
    }
    const endMs = performance.timeOrigin + performance.now();
    const startMs = await Promise.race([firstStart, sleep(1_000).then(() => endMs)]);
    const windowMs = endMs - startMs;

    const backendCpuAtEnd = await backendCpu(setup.pool);
    let postgresCpuMs = 0;
    for (const [pid, ms] of backendCpuAtEnd) postgresCpuMs += ms - (backendCpuAtReady.get(pid) ?? 0);
    const reports = await Promise.all(children.map((child) => child.report()));
    const cpuMs = children.reduce((sum, child) => sum + child.cpuMs(), 0) - cpuAtReadyMs;
    const peakRssMb = children.map((child) => round(child.peakRssMb()));
    // Workers first, then any server they talk to (started first).
    for (const child of [...children].reverse()) await child.stop();
    // Exiting backends flush their statistics; give the collector a moment.
    await sleep(1_200);
    const delta = counterDelta(before, await databaseCounters(setup.pool));
    const statements = reports.reduce((sum, report) => sum + report.statements, 0);
    // Over HTTP the first child is the protocol server, the rest are its clients.
    const [server, ...clients] = reports;
    const breakdown =
      engine === "fencelineHttp" && server
        ? httpBreakdown(clients.flatMap((report) => (report.protocolTimings ? [report.protocolTimings] : [])), server.protocolTimings ? [server.protocolTimings] : [], completed)
        : null;
    const per = (value: number) => round(value / Math.max(1, completed), 3);
    return {
      engine,
      settings: setup.settings,
      steps,
      completed,
      stepsPerS: round((completed / windowMs) * 1000, 0),
      windowMs: round(windowMs, 0),
      enqueueMs: round(enqueueMs, 0),
      statementsPerStep: per(statements),
      perStep: { xactCommit: per(delta.xactCommit), tupInserted: per(delta.tupInserted), tupUpdated: per(delta.tupUpdated), tupDeleted: per(delta.tupDeleted) },
      workerCpuMsPerStep: round(cpuMs / Math.max(1, completed), 3),
      postgresCpuMsPerStep: round(postgresCpuMs / Math.max(1, completed), 3),
      peakRssMb,
      httpBreakdown: breakdown,
    };
  } finally {
    await setup.drop();
  }
}

/** CPU so far of every backend connected to the pool's database, by pid (readable when PostgreSQL runs on this host). */
async function backendCpu(pool: import("pg").Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database()");
  return new Map(rows.map(({ pid }) => [pid, cpuTimeMs(pid)]));
}

/** The standard variables that turn tracing on in a child, exporting to `endpoint`. */
function tracingEnvironment(endpoint: string): Record<string, string> {
  // The bench's own OTEL_TRACES_SAMPLER, when set, is passed on (always_off: the SDK's cost without spans).
  return { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_TRACES_SAMPLER: process.env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on" };
}

/** Runs `work` (which spawns the children) with `env` added to this process's environment, then restores it. */
async function withEnvironment<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
