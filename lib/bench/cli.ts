/**
 * `npm run bench`: Fenceline side by side with graphile-worker, pg-boss and DBOS Transact on the
 * same PostgreSQL, in one run, each engine in its own fresh database, engines alternating.
 *
 *   npm run bench                         all measurements, a readable table with ratios
 *   npm run bench -- --json               the same; the last stdout line is one JSON object
 *   npm run bench -- --only throughput,latency,recovery,dashboard,noisy-neighbour
 *   npm run bench -- --only noisy-neighbour --rounds 3   (fair share: one key's 10,000 requests
 *                                          against nine keys' 10, fairness on and off)
 *   npm run bench -- --only waits --waits-sections burst,steady   (the timers' lateness alone)
 *   npm run bench -- --only waits --waits-sections events --waits-events 2000   (event to claim, fewer events)
 *   npm run bench -- --only fan-out   (one step starts 1,000 child requests: time to all started, to all completed)
 *   npm run bench -- --only schedules   (1,000 schedules due in the same minute: firing lateness, duplicates)
 *   npm run bench -- --only waits --rounds 3   (requests that wait: 100,000 asleep against none, PostgreSQL's
 *                                          CPU and the claim; timer lateness; event to claim)
 *   npm run bench -- --steps 2000 --scale 0.01 --latency-seconds 5 --rounds 3
 *   npm run bench -- --only throughput --skip-analyze   (tables without statistics, see docs/benchmarks)
 *   npm run bench -- --only throughput --engines fencelineDirect,graphileTuned
 *   npm run bench -- --only profile       (not in the default run: the engine's cost per statement)
 *   npm run bench -- --only tracing --steps 2000 --rounds 3   (not in the default run: the direct and
 *                                          HTTP rows with tracing off and on, exporting to a local receiver)
 *   npm run bench -- --only cluster --replicas 1,2,4   (not in the default run: HTTP workers through
 *                                          haproxy and PgBouncer to that many protocol servers)
 *   npm run bench -- --only failover --rounds 3   (not in the default run: the failover cells of both
 *                                          tiers, pg_ctl promote and Patroni, synchronous and asynchronous)
 *   npm run bench -- --only scorecard     the same faults on every engine, effects counted at the
 *                                          destination (as `npm run scorecard` at its defaults)
 *
 * Progress goes to stderr. Worker memory is measured during the throughput runs.
 * FENCELINE_BENCH_CONCURRENCY / FENCELINE_BENCH_PROCESSES change Fenceline's worker settings.
 */
import { cpus, loadavg, totalmem } from "node:os";
import pg from "pg";
import { command, DATABASE_ENVIRONMENT, exit, listOf, positiveNumber } from "@/lib/cli/command";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { measureDashboard, type DashboardResult } from "./dashboard";
import { FENCELINE_PROCESSES, type EngineName } from "./engines";
import { measureStartLatency, type LatencyResult } from "./latency";
import { measureRecovery, type RecoveryResult } from "./recovery";
import { percentile, round, sleep } from "./stats";
import { measureProfile, type ProfileResult } from "./profile";
import { measureCluster, type ClusterResult } from "./cluster";
import { measureFailover, type FailoverRow } from "./failover";
import { measureNoisyNeighbour, type NoisyNeighbourResult } from "./fair-share";
import { measureSchedules, type SchedulesResult } from "./schedules";
import { measureWaits, WAITS, WAITS_SECTIONS, type WaitsResult } from "./waits";
import { FAN_OUT_CHILDREN, measureFanOut, type FanOutResult } from "./fan-out";
import { measureThroughput, type ThroughputResult } from "./throughput";
import { measureTracing, TRACING_ENGINES, type TracingRow } from "./tracing";
import { DEFAULT_JOBS_PER_FAULT, renderScorecard, runScorecard, SCORECARD_SEED, untilInterrupted, type ScorecardResult } from "./scorecard/scorecard";
import { SCORECARD_ENGINES } from "./scorecard/types";
import { CONTRACTS } from "@/lib/scenarios/types";
import { peerVersions } from "./peers";

const PARTS = ["throughput", "latency", "recovery", "dashboard", "scorecard", "noisy-neighbour", "waits", "fan-out", "schedules", "profile", "cluster", "failover", "tracing"] as const;
type Part = (typeof PARTS)[number];
const DEFAULT_PARTS: readonly Part[] = ["throughput", "latency", "recovery", "dashboard", "scorecard", "noisy-neighbour", "waits", "fan-out", "schedules"];
const PROFILE_BATCH = 50;
const QUIESCE_MS = 2_000;
const THROUGHPUT_ENGINES: readonly EngineName[] = ["fencelineDirect", "graphileTuned", "fencelineHttp", "dbosTuned", "graphileDefault", "pgBoss", "dbosDefault"];
const LATENCY_RATE_PER_S = 50;
/** Start latency's engines, one worker process each, by the key they have in the result. */
const LATENCY_ENGINES = [
  ["fenceline", "fencelineDirect"],
  ["fencelineHttp", "fencelineHttp"],
  ["graphile", "graphileDefault"],
  ["dbosTuned", "dbosTuned"],
  ["dbosDefault", "dbosDefault"],
] as const satisfies readonly (readonly [string, EngineName])[];
type LatencyKey = (typeof LATENCY_ENGINES)[number][0];
const THROUGHPUT_TIMEOUT_MS = 10 * 60_000;

const { values } = command({
  name: "npm run bench",
  summary: "runs Fenceline side by side with graphile-worker, pg-boss and DBOS Transact on the same PostgreSQL, each engine in a fresh database, and prints a table with ratios (progress goes to stderr).",
  options: {
    json: { type: "boolean", description: "end with one JSON object on the last stdout line" },
    only: { type: "string", valueName: "parts", default: DEFAULT_PARTS.join(","), description: `measurements to run, from ${PARTS.join(", ")}` },
    engines: { type: "string", valueName: "engines", default: THROUGHPUT_ENGINES.join(","), description: `throughput engines, from ${THROUGHPUT_ENGINES.join(", ")}` },
    steps: { type: "string", valueName: "n", default: "20000", description: "no-op steps per throughput run" },
    scale: { type: "string", valueName: "x", default: "1", description: "dashboard seed size (1 = 1M steps, 10M lease events; generated once and kept)" },
    "latency-seconds": { type: "string", valueName: "s", default: "20", description: "length of each start-latency run" },
    rounds: { type: "string", valueName: "n", default: "1", description: "rounds of throughput, latency, noisy neighbour, the waits' CPU windows and failover (medians are reported)" },
    schedules: { type: "string", valueName: "n", default: "1000", description: "schedules due in the same minute, for the schedules part" },
    "waits-sections": { type: "string", valueName: "sections", default: WAITS_SECTIONS.join(","), description: `sections of the waits part, from ${WAITS_SECTIONS.join(", ")}` },
    "waits-events": { type: "string", valueName: "n", default: String(WAITS.events), description: "waiting requests and events sent in the waits part's events section" },
    samples: { type: "string", valueName: "n", default: "200", description: "dashboard reads per query" },
    "fan-out-children": { type: "string", valueName: "n", default: String(FAN_OUT_CHILDREN), description: `children of the fan-out part's one step (1 to ${FAN_OUT_CHILDREN}, the bound)` },
    replicas: { type: "string", valueName: "counts", default: "1,2,4", description: "protocol servers behind the balancer in the cluster part" },
    "skip-analyze": { type: "boolean", description: "leave freshly filled tables without statistics (the state before autovacuum's first analyse)" },
  },
  environment: [
    { name: "FENCELINE_BENCH_CONCURRENCY", default: "50", description: "attempts each Fenceline worker runs at once (and the DBOS defaults row's workerConcurrency)" },
    { name: "FENCELINE_BENCH_PROCESSES", default: "2", description: "Fenceline's and DBOS's worker processes" },
    ...DATABASE_ENVIRONMENT.filter((variable) => variable.name !== "FENCELINE_DATABASE"),
  ],
  examples: ["npm run bench -- --json --rounds 3", "npm run bench -- --only throughput --engines fencelineDirect,graphileTuned --steps 2000"],
});

const parts = new Set<Part>(listOf("only", values.only, PARTS));
const throughputEngines: readonly EngineName[] = listOf("engines", values.engines, THROUGHPUT_ENGINES);
const steps = Math.round(positiveNumber("steps", values.steps));
const scale = positiveNumber("scale", values.scale);
const latencyMs = positiveNumber("latency-seconds", values["latency-seconds"]) * 1000;
const rounds = Math.round(positiveNumber("rounds", values.rounds));
const waitsSections = new Set(listOf("waits-sections", values["waits-sections"], WAITS_SECTIONS));
const waitsEvents = Math.round(positiveNumber("waits-events", values["waits-events"]));
const samples = Math.round(positiveNumber("samples", values.samples));
const fanOutChildren = Math.min(FAN_OUT_CHILDREN, Math.round(positiveNumber("fan-out-children", values["fan-out-children"])));
const replicaCounts = values.replicas.split(",").map((count) => Math.round(positiveNumber("replicas", count)));
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function environment() {
  const { url } = await resolveDatabaseUrl({ database: "postgres" });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ server_version: string; shared_buffers: string; synchronous_commit: string }>(
    "SELECT current_setting('server_version') AS server_version, current_setting('shared_buffers') AS shared_buffers, current_setting('synchronous_commit') AS synchronous_commit",
  );
  await client.end();
  const peers = await peerVersions();
  return {
    cpu: `${cpus().length} x ${cpus()[0]?.model ?? "unknown"}`,
    memoryGiB: round(totalmem() / 2 ** 30, 0),
    node: process.version,
    postgres: rows[0]!.server_version,
    postgresSettings: { shared_buffers: rows[0]!.shared_buffers, synchronous_commit: rows[0]!.synchronous_commit },
    graphileWorker: peers.graphileWorker,
    pgBoss: peers.pgBoss,
    dbos: peers.dbos,
  };
}

/** Median run of each engine over the rounds (by steps/s). */
function medianRuns(runs: readonly ThroughputResult[]): Map<EngineName, ThroughputResult> {
  const byEngine = new Map<EngineName, ThroughputResult[]>();
  for (const result of runs) byEngine.set(result.engine, [...(byEngine.get(result.engine) ?? []), result]);
  return new Map(
    [...byEngine].map(([engine, results]) => {
      const sorted = [...results].sort((a, b) => a.stepsPerS - b.stepsPerS);
      return [engine, sorted[Math.floor((sorted.length - 1) / 2)]!];
    }),
  );
}

/** Failures of one measurement, reported in the result; the others still run. */
const failures: { measurement: string; error: string }[] = [];

async function attempt<T>(measurement: string, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    log(`${measurement} FAILED: ${text}`);
    failures.push({ measurement, error: text });
    return null;
  }
}

/** Each percentile's median over the rounds (the other fields from the run with the median p99). */
function medianLatency(results: readonly LatencyResult[]): LatencyResult {
  const median = (pick: (result: LatencyResult) => number) => round(percentile(results.map(pick), 50), 2);
  const byP99 = [...results].sort((a, b) => a.p99 - b.p99)[Math.floor((results.length - 1) / 2)]!;
  return { ...byP99, p50: median((r) => r.p50), p95: median((r) => r.p95), p99: median((r) => r.p99) };
}

/** A checkpoint, then a pause: dirty pages from earlier measurements are written before the next one starts. */
async function quiesce(): Promise<void> {
  const { url } = await resolveDatabaseUrl({ database: "postgres" });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("CHECKPOINT");
  } catch (error) {
    log(`CHECKPOINT refused (${error instanceof Error ? error.message : String(error)}); pausing only`);
  } finally {
    await client.end();
  }
  await sleep(QUIESCE_MS);
}

async function main(): Promise<void> {
  const loadBefore = loadavg().map((value) => round(value, 2));
  const env = await environment();
  log(`load average ${loadBefore.join(" / ")}; PostgreSQL ${env.postgres}; node ${env.node}`);

  let throughputRuns: ThroughputResult[] = [];
  if (parts.has("throughput")) {
    for (let r = 0; r < rounds; r += 1) {
      // Alternate engines, and rotate who goes first from round to round.
      const order = throughputEngines.map((_, i) => throughputEngines[(i + r) % throughputEngines.length]!);
      for (const engine of order) {
        log(`throughput ${engine} (${steps} steps, round ${r + 1}/${rounds})`);
        const result = await attempt(`throughput ${engine}`, () => measureThroughput(engine, steps, THROUGHPUT_TIMEOUT_MS, !values["skip-analyze"]));
        if (!result) continue;
        log(
          `  ${result.stepsPerS} steps/s, ${result.statementsPerStep} statements/step, ${result.perStep.xactCommit} transactions/step, ` +
            `CPU ms/step: PostgreSQL ${result.postgresCpuMsPerStep}, workers ${result.workerCpuMsPerStep}`,
        );
        throughputRuns = [...throughputRuns, result];
      }
    }
  }
  const throughput = medianRuns(throughputRuns);

  const latency = new Map<LatencyKey, LatencyResult>();
  const latencyRuns = new Map<LatencyKey, LatencyResult[]>();
  if (parts.has("latency")) {
    for (let r = 0; r < rounds; r += 1) {
      // Rotate who goes first, and start each from a quiet server: right after the throughput
      // runs the first one would otherwise share the machine with their checkpoint and vacuum.
      const order = LATENCY_ENGINES.map((_, i) => LATENCY_ENGINES[(i + r) % LATENCY_ENGINES.length]!);
      for (const [key, engine] of order) {
        await quiesce();
        log(`start latency ${engine} (${LATENCY_RATE_PER_S}/s for ${latencyMs / 1000} s, round ${r + 1}/${rounds})`);
        const result = await attempt(`start latency ${engine}`, () => measureStartLatency(engine, LATENCY_RATE_PER_S, latencyMs));
        if (!result) continue;
        log(`  p50 ${result.p50} ms, p95 ${result.p95} ms, p99 ${result.p99} ms`);
        latencyRuns.set(key, [...(latencyRuns.get(key) ?? []), result]);
      }
    }
    for (const [key, results] of latencyRuns) latency.set(key, medianLatency(results));
  }

  let recovery: RecoveryResult | null = null;
  if (parts.has("recovery")) {
    log("recovery after SIGKILL (Fenceline, default lease policy of step class pure)");
    recovery = await attempt("recovery", measureRecovery);
    if (recovery) log(`  ${recovery.fencelineMs} ms`);
  }

  let dashboard: DashboardResult | null = null;
  if (parts.has("dashboard")) {
    log(`dashboard reads at scale ${scale}`);
    dashboard = await attempt("dashboard", () => measureDashboard(scale, samples, log));
    if (dashboard) log(`  projection p95 ${dashboard.projection.p95} ms, step detail ${dashboard.stepDetail.p95}, review queue ${dashboard.reviewQueue.p95}, review case ${dashboard.reviewCase.p95}, metrics ${dashboard.metrics.p95}`);
    if (dashboard) {
      const { requestPage: page, bulkCancel: bulk } = dashboard;
      log(`  request page (${page.steps} steps, ${page.attempts} attempts, ${page.bytes} bytes): read p50 ${page.readP50} ms p95 ${page.readP95}; with the API answer p50 ${page.answerP50} p95 ${page.answerP95}`);
      log(`  bulk cancel of ${bulk.requests}: preview ${bulk.previewMs} ms, start ${bulk.startMs} ms, run ${bulk.runMs} ms (${bulk.perSecond} requests/s)`);
    }
  }

  let scorecard: ScorecardResult | null = null;
  if (parts.has("scorecard")) {
    log(`scorecard: the same faults on ${SCORECARD_ENGINES.join(", ")}, effects counted at the destination (seed ${SCORECARD_SEED})`);
    const scorecardLog = (line: string) => log(`  ${line}`);
    scorecard = await attempt("scorecard", () =>
      untilInterrupted(
        (signal) =>
          runScorecard({ engines: SCORECARD_ENGINES, contracts: CONTRACTS, jobsPerFault: DEFAULT_JOBS_PER_FAULT, seed: SCORECARD_SEED, confirm: true, log: scorecardLog, signal }),
        scorecardLog,
      ),
    );
    if (scorecard && !scorecard.fencelineHolds) failures.push({ measurement: "scorecard", error: "Fenceline broke one of its promises: see the scorecard's rows" });
  }

  let noisyNeighbour: NoisyNeighbourResult | null = null;
  if (parts.has("noisy-neighbour")) {
    noisyNeighbour = await attempt("noisy neighbour", () => measureNoisyNeighbour(rounds, log));
  }

  let waits: WaitsResult | null = null;
  if (parts.has("waits")) {
    waits = await attempt("waits", () => measureWaits(rounds, log, waitsSections, { ...WAITS, events: waitsEvents }));
  }

  let fanOut: FanOutResult | null = null;
  if (parts.has("fan-out")) {
    fanOut = await attempt("fan-out", () => measureFanOut(rounds, log, fanOutChildren));
    if (fanOut && fanOut.duplicateChildren > 0) failures.push({ measurement: "fan-out", error: `${fanOut.duplicateChildren} duplicate children` });
  }

  let schedules: SchedulesResult | null = null;
  if (parts.has("schedules")) {
    schedules = await attempt("schedules", () => measureSchedules(Number(values.schedules), log));
    if (schedules && schedules.duplicateFirings > 0) failures.push({ measurement: "schedules", error: `${schedules.duplicateFirings} due times started more than one request` });
  }

  let profile: ProfileResult | null = null;
  if (parts.has("profile")) {
    log(`profile: ${steps} steps, claims and receipt batches of ${PROFILE_BATCH}, one connection`);
    profile = await attempt("profile", () => measureProfile(steps, PROFILE_BATCH));
    if (profile) log(`  ${profile.stepsPerS} steps/s, ${profile.usPerStep} µs/step, backend CPU ${profile.backendCpuUsPerStep ?? "-"} µs/step`);
  }

  let tracing: TracingRow[] | null = null;
  if (parts.has("tracing")) {
    log(`tracing: the direct and HTTP throughput rows with tracing off and on (${steps} steps, ${rounds} round(s), alternating)`);
    // --engines narrows it to fencelineDirect or fencelineHttp.
    const engines = TRACING_ENGINES.filter((engine) => throughputEngines.includes(engine));
    tracing = await attempt("tracing", () => measureTracing(steps, rounds, THROUGHPUT_TIMEOUT_MS, log, engines));
  }

  let cluster: ClusterResult[] | null = null;
  if (parts.has("cluster")) {
    log(`cluster: ${FENCELINE_PROCESSES} HTTP workers through haproxy and PgBouncer (transaction mode, unnamed statements) to ${replicaCounts.join(", ")} protocol servers; ${steps} steps, then start latency`);
    cluster = await attempt("cluster", () => measureCluster(replicaCounts, steps, latencyMs, THROUGHPUT_TIMEOUT_MS));
    for (const row of cluster ?? []) log(`  ${row.replicas} replicas: ${row.stepsPerS} steps/s; start latency p50 ${row.latency.p50} ms, p99 ${row.latency.p99} ms`);
  }

  let failover: FailoverRow[] | null = null;
  if (parts.has("failover")) {
    log(`failover: the quick tier (pg_ctl promote) and the Patroni tier, synchronous and asynchronous, against the fenced destination; ${rounds} round(s)`);
    failover = await attempt("failover", () => measureFailover(rounds, log));
    for (const row of failover ?? []) if (row.failed.length > 0) failures.push({ measurement: `failover ${row.tier} ${row.replication}`, error: `cells failed: ${row.failed.join("; ")}` });
  }

  const loadAfter = loadavg().map((value) => round(value, 2));
  const fencelineRss = throughputRuns
    .filter((run) => run.engine === "fencelineDirect" || run.engine === "fencelineHttp")
    // Over HTTP the first process is the protocol server, not the worker.
    .flatMap((run) => (run.engine === "fencelineHttp" ? run.peakRssMb.slice(1) : run.peakRssMb));
  const dbosRss = throughputRuns.filter((run) => run.engine === "dbosDefault" || run.engine === "dbosTuned").flatMap((run) => run.peakRssMb);
  const figure = (engine: EngineName) => throughput.get(engine)?.stepsPerS ?? null;
  const ratioOf = (a: EngineName, b: EngineName) => {
    const [x, y] = [figure(a), figure(b)];
    return x && y ? round(x / y, 2) : null;
  };
  const result = {
    throughput: {
      fencelineDirect: figure("fencelineDirect"),
      fencelineHttp: figure("fencelineHttp"),
      graphileDefault: figure("graphileDefault"),
      graphileTuned: figure("graphileTuned"),
      pgBoss: figure("pgBoss"),
      dbosDefault: figure("dbosDefault"),
      dbosTuned: figure("dbosTuned"),
    },
    throughputRatios: {
      fencelineDirectPerDbosTuned: ratioOf("fencelineDirect", "dbosTuned"),
      fencelineHttpPerDbosTuned: ratioOf("fencelineHttp", "dbosTuned"),
    },
    startLatencyMs: Object.fromEntries([...latency].map(([key, value]) => [key, { p50: value.p50, p95: value.p95, p99: value.p99 }])),
    recoveryMs: recovery ? { fenceline: recovery.fencelineMs, graphileDefaultBound: recovery.graphileDefaultBoundMs, pgBossDefaultBound: recovery.pgBossDefaultBoundMs } : {},
    dashboardMs: dashboard
      ? {
          projection: { p50: dashboard.projection.p50, p95: dashboard.projection.p95 },
          stepDetail: { p50: dashboard.stepDetail.p50, p95: dashboard.stepDetail.p95 },
          reviewQueue: { p50: dashboard.reviewQueue.p50, p95: dashboard.reviewQueue.p95 },
          reviewCase: { p50: dashboard.reviewCase.p50, p95: dashboard.reviewCase.p95 },
          metrics: { p50: dashboard.metrics.p50, p95: dashboard.metrics.p95 },
          requestPage200x2000: { p50: dashboard.requestPage.answerP50, p95: dashboard.requestPage.answerP95 },
        }
      : {},
    workerRssMb: fencelineRss.length > 0 ? Math.max(...fencelineRss) : null,
    dbosWorkerRssMb: dbosRss.length > 0 ? Math.max(...dbosRss) : null,
    noisyNeighbour: noisyNeighbour ? { shape: noisyNeighbour.shape, on: noisyNeighbour.on, off: noisyNeighbour.off } : null,
    waits,
    fanOut: fanOut ? { children: fanOut.children, childrenWrittenMs: fanOut.childrenWrittenMs, allStartedMs: fanOut.allStartedMs, allCompletedMs: fanOut.allCompletedMs, parentSettledMs: fanOut.parentSettledMs, nextClaimedAfterLastChildMs: fanOut.nextClaimedAfterLastChildMs, duplicateChildren: fanOut.duplicateChildren, wake: fanOut.wake } : null,
    schedules,
    cluster,
    failover,
    scorecard,
    tracing,
    run: {
      steps,
      rounds,
      scale,
      analyzedBeforeThroughput: !values["skip-analyze"],
      failures,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadAfter,
      ...env,
      throughputRuns,
      latency: Object.fromEntries(latency),
      latencyRuns: Object.fromEntries(latencyRuns),
      recovery,
      dashboard,
      profile,
      noisyNeighbourRuns: noisyNeighbour?.runs ?? [],
    },
  };

  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    printTable(result, throughput, latency, recovery, dashboard, profile);
    if (noisyNeighbour) printNoisyNeighbour(noisyNeighbour);
    if (waits) printWaits(waits);
    if (fanOut) printFanOut(fanOut);
    if (schedules) {
      process.stdout.write(
        `\n${schedules.schedules.toLocaleString("en")} schedules due in the same minute (${FENCELINE_PROCESSES} workers' keepers): firing lateness p50 ${schedules.latenessMs.p50}  p99 ${schedules.latenessMs.p99}  max ${schedules.latenessMs.max} ms; ${schedules.fired} started, ${schedules.duplicateFirings} duplicates\n`,
      );
    }
    if (cluster) printCluster(cluster);
    if (failover) printFailover(failover);
    if (tracing) printTracing(tracing);
    if (scorecard) process.stdout.write(`\n${renderScorecard(scorecard)}\n`);
  }
}

function printTable(
  result: {
    workerRssMb: number | null;
    dbosWorkerRssMb: number | null;
    run: { loadAverageBefore: number[]; loadAverageAfter: number[]; cpu: string; postgres: string; node: string; graphileWorker: string; pgBoss: string; dbos: string };
  },
  throughput: Map<EngineName, ThroughputResult>,
  latency: Map<LatencyKey, LatencyResult>,
  recovery: RecoveryResult | null,
  dashboard: DashboardResult | null,
  profile: ProfileResult | null,
): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? `${round(a / b, 2)}x` : "-");
  out(`Fenceline benchmarks — ${result.run.cpu}; PostgreSQL ${result.run.postgres}; node ${result.run.node}`);
  out(`graphile-worker ${result.run.graphileWorker}, pg-boss ${result.run.pgBoss}, DBOS Transact ${result.run.dbos}; load average ${result.run.loadAverageBefore.join("/")} -> ${result.run.loadAverageAfter.join("/")}`);
  if (throughput.size > 0) {
    const tuned = throughput.get("graphileTuned")?.stepsPerS;
    const direct = throughput.get("fencelineDirect")?.stepsPerS;
    const dbosTuned = throughput.get("dbosTuned")?.stepsPerS;
    out();
    out("Throughput (no-op steps, first handler start to last completion in the database; per step: statements, transactions, rows, CPU)");
    out(
      `${"engine".padEnd(17)}${"steps/s".padStart(9)}${"vs graphile tuned".padStart(19)}${"vs dbos tuned".padStart(15)}${"vs fl direct".padStart(14)}` +
        `${"stmts/step".padStart(12)}` +
        `${"xacts/step".padStart(12)}${"rows ins/upd/del".padStart(20)}${"pg cpu ms".padStart(11)}${"worker cpu ms".padStart(15)}  settings`,
    );
    for (const [engine, run] of throughput) {
      out(
        `${engine.padEnd(17)}${String(run.stepsPerS).padStart(9)}${ratio(run.stepsPerS, tuned).padStart(19)}${ratio(run.stepsPerS, dbosTuned).padStart(15)}` +
          `${ratio(run.stepsPerS, direct).padStart(14)}` +
          `${String(run.statementsPerStep).padStart(12)}${String(run.perStep.xactCommit).padStart(12)}` +
          `${`${run.perStep.tupInserted}/${run.perStep.tupUpdated}/${run.perStep.tupDeleted}`.padStart(20)}${String(run.postgresCpuMsPerStep).padStart(11)}` +
          `${String(run.workerCpuMsPerStep).padStart(15)}  ${run.settings}`,
      );
    }
    out(`Worker peak RSS: Fenceline ${result.workerRssMb ?? "-"} MiB, DBOS ${result.dbosWorkerRssMb ?? "-"} MiB`);
    const breakdown = throughput.get("fencelineHttp")?.httpBreakdown;
    if (breakdown) {
      out();
      out("HTTP breakdown (fencelineHttp): mean ms per call; wire = the client's wait beyond the server's total");
      out(`${"operation".padEnd(26)}${"calls/step".padStart(11)}${"client".padStart(8)}${"encode".padStart(8)}${"decode".padStart(8)}${"wire".padStart(8)}${"server".padStart(8)}${"auth".padStart(8)}${"body".padStart(8)}${"work".padStart(8)}`);
      for (const [operation, row] of Object.entries(breakdown)) {
        const cell = (value: number | null | undefined) => (value === undefined || value === null ? "-" : String(value)).padStart(8);
        out(
          `${operation.padEnd(26)}${String(row.callsPerStep).padStart(11)}${cell(row.client.total)}${cell(row.client.encode)}${cell(row.client.decode)}${cell(row.wireMs)}` +
            `${cell(row.server.total)}${cell(row.server.auth)}${cell(row.server.body)}${cell(row.server.work)}`,
        );
      }
    }
  }
  if (latency.size > 0) {
    out();
    out(`Start latency at ${LATENCY_RATE_PER_S} steps/s, ms (enqueue call included)`);
    for (const [key, value] of latency) out(`${key.padEnd(12)} p50 ${value.p50}  p95 ${value.p95}  p99 ${value.p99}  max ${value.max}  (enqueue call p50 ${value.enqueueP50})`);
    const fl = latency.get("fenceline")?.p99;
    const gw = latency.get("graphile")?.p99;
    const db = latency.get("dbosTuned")?.p99;
    const http = latency.get("fencelineHttp")?.p99;
    if (fl && gw) out(`p99 Fenceline / graphile-worker: ${ratio(fl, gw)}`);
    if (fl && db) out(`p99 Fenceline / DBOS tuned: ${ratio(fl, db)}`);
    if (fl && http) out(`p99 Fenceline HTTP - direct: ${round(http - fl, 2)} ms`);
  }
  if (recovery) {
    out();
    out(`Recovery after SIGKILL: Fenceline ${recovery.fencelineMs} ms (bound: TTL ${recovery.leaseTtlMs} + scan ${recovery.scanIntervalMs} ms);`);
    out(`  documented bounds at defaults: graphile-worker ${recovery.graphileDefaultBoundMs / 60_000} min, pg-boss ${recovery.pgBossDefaultBoundMs / 60_000} min`);
  }
  if (dashboard) {
    out();
    out(`Dashboard reads at ${dashboard.steps.toLocaleString("en")} steps, ${dashboard.leaseEvents.toLocaleString("en")} lease events (ms)`);
    for (const key of ["projection", "stepDetail", "reviewQueue", "reviewCase", "metrics", "metricsDay"] as const) {
      out(`${key.padEnd(12)} p50 ${dashboard[key].p50}  p95 ${dashboard[key].p95}  (${dashboard[key].samples} reads)`);
    }
    const slowest = Object.entries(dashboard.metricStatementsMs).sort((a, b) => b[1] - a[1]);
    out(`metric statements, last hour, median ms: ${slowest.map(([id, ms]) => `${id} ${ms}`).join(", ")}`);
    const page = dashboard.requestPage;
    out(`request page, ${page.steps} steps / ${page.attempts} attempts (${page.bytes.toLocaleString("en")} bytes): read p50 ${page.readP50}  p95 ${page.readP95}; read + API answer p50 ${page.answerP50}  p95 ${page.answerP95}  (${page.samples} reads)`);
    const bulk = dashboard.bulkCancel;
    out(`bulk cancel of ${bulk.requests} filtered requests: preview ${bulk.previewMs} ms, start ${bulk.startMs} ms, run ${bulk.runMs} ms = ${bulk.perSecond} requests/s`);
  }
  if (profile) {
    out();
    out(`Engine profile: ${profile.steps} steps, batches of ${profile.batch}, one connection: ${profile.stepsPerS} steps/s, ${profile.usPerStep} µs/step, the backend's CPU ${profile.backendCpuUsPerStep ?? "-"} µs/step`);
    out(`${"statement".padEnd(42)}${"calls".padStart(7)}${"µs/step".padStart(9)}  plans (generic/custom)`);
    for (const row of profile.statements) {
      const plans = row.genericPlans === null ? "-" : `${row.genericPlans}/${row.customPlans}`;
      out(`${row.statement.padEnd(42)}${String(row.calls).padStart(7)}${String(row.usPerStep).padStart(9)}  ${plans}`);
    }
  }
}

function printCluster(rows: readonly ClusterResult[]): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  out();
  out("Cluster: HTTP workers -> haproxy (round robin) -> protocol servers -> PgBouncer (transaction, unnamed statements) -> PostgreSQL");
  out(`${"replicas".padEnd(10)}${"steps/s".padStart(9)}${"latency p50".padStart(13)}${"p95".padStart(8)}${"p99".padStart(8)} ms`);
  for (const row of rows) {
    out(`${String(row.replicas).padEnd(10)}${String(row.stepsPerS).padStart(9)}${String(row.latency.p50).padStart(13)}${String(row.latency.p95).padStart(8)}${String(row.latency.p99).padStart(8)}`);
  }
}

function printFailover(rows: readonly FailoverRow[]): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const cell = (value: number | null, width: number) => (value === null ? "-" : String(value)).padStart(width);
  out();
  out("Failover under traffic, fenced destination (medians over the rounds; ms from the SIGKILL of the primary)");
  out(`${"tier".padEnd(9)}${"replication".padEnd(14)}${"write pause".padStart(12)}${"promotion".padStart(11)}${"first term".padStart(12)}${"lost".padStart(6)}${"stale rejected".padStart(16)}${"passed".padStart(9)}`);
  for (const row of rows) {
    out(
      `${row.tier.padEnd(9)}${row.replication.padEnd(14)}${cell(row.writePauseMs, 12)}${cell(row.promotionMs, 11)}${cell(row.firstTermInNewEpochAfterKillMs, 12)}` +
        `${cell(row.requestsLost, 6)}${cell(row.staleWritesRejected, 16)}${`${row.passed}/${row.rounds}`.padStart(9)}`,
    );
  }
}

await main();
await exit(failures.length > 0 ? 1 : 0);

function printNoisyNeighbour(result: NoisyNeighbourResult): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const { shape, on, off } = result;
  out();
  out(
    `Noisy neighbour (fair share): ${shape.bigRequests} requests on one concurrency key, then ${shape.smallRequests} on each of ${shape.smallKeys} others, ` +
      `no-op steps, ms from the first claim to each key's last receipt (medians of ${result.runs.length / 2} round(s))`,
  );
  out(`${"fairness".padEnd(10)}${"small keys, median".padStart(20)}${"small keys, last".padStart(18)}${"big key".padStart(10)}`);
  for (const [name, row] of [["on", on], ["off", off]] as const) {
    out(`${name.padEnd(10)}${String(row.smallKeyMedianMs).padStart(20)}${String(row.smallKeyMaxMs).padStart(18)}${String(row.bigKeyMs).padStart(10)}`);
  }
}

function printFanOut(result: FanOutResult): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  out();
  out(`Fan-out (direct transport, ${result.workers} workers of concurrency ${result.concurrency}; database clock, ms from the parent step's claim; median of ${result.runs.length} run(s))`);
  out(
    `${result.children.toLocaleString("en")} children from one step: written ${result.childrenWrittenMs}, all started ${result.allStartedMs}, all completed ${result.allCompletedMs}, ` +
      `parent settled ${result.parentSettledMs}, next step claimed ${result.nextClaimedAfterLastChildMs} after the last child's end; ${result.duplicateChildren} duplicate children`,
  );
  const { wake } = result;
  out(`${wake.parents} parents of ${wake.children} children, one started every ${wake.everyMs} ms: last child's end → next step claimed p50 ${wake.p50}, p99 ${wake.p99}, max ${wake.max}`);
}

function printWaits(result: WaitsResult): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const { asleep, burst, steady, events } = result;
  const distribution = (d: { p50: number; p99: number; max: number }) => `p50 ${d.p50}  p99 ${d.p99}  max ${d.max}`;
  out();
  out(`Requests that wait (direct transport, ${FENCELINE_PROCESSES} workers; times on the database clock, ms)`);
  if (asleep) {
    out(
      `${asleep.requests.toLocaleString("en")} asleep: PostgreSQL CPU ${asleep.asleepCpuMsPerS} ms/s against ${asleep.idleCpuMsPerS} ms/s with none asleep ` +
        `(${asleep.cpuDifferencePercent >= 0 ? "+" : ""}${asleep.cpuDifferencePercent}%; medians of ${asleep.windows.length / 2} windows of ${asleep.windowMs / 1000} s each)`,
    );
    const { none, tenth, all, allEnded } = asleep.claim;
    out(
      `claim of 50 among 200 ready: ${none.buffers} buffers with none asleep, ${tenth.buffers} beside ${tenth.asleep.toLocaleString("en")}, ${all.buffers} beside ${all.asleep.toLocaleString("en")}; ` +
        `plan ${asleep.claim.samePlan ? "the same" : "DIFFERENT"} at ${tenth.asleep.toLocaleString("en")} and ${all.asleep.toLocaleString("en")}; ` +
        `${allEnded.buffers} once those requests are cancelled, their rows kept (the control)`,
    );
  }
  if (burst) out(`${burst.timers.toLocaleString("en")} timers due in one second: lateness ${distribution(burst.latenessMs)}; due to the next step's claim ${distribution(burst.dueToNextClaimMs)}`);
  if (steady) out(`${steady.timers.toLocaleString("en")} timers due ${Math.round(steady.timers / (steady.spreadMs / 1000))} a second: lateness ${distribution(steady.latenessMs)}; due to the next step's claim ${distribution(steady.dueToNextClaimMs)}`);
  if (events) out(`${events.events.toLocaleString("en")} events sent at ${events.targetPerS}/s (accepted ${events.acceptedPerS}/s): event to the next step's claim ${distribution(events.eventToClaimMs)}; send ${distribution(events.sendMs)}`);
}

function printTracing(rows: readonly TracingRow[]): void {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  out();
  out("Tracing (no-op steps; on: every request traced, spans exported over OTLP/HTTP to a local receiver; medians over the rounds;");
  out("CPU cost: 1 − off/on of all CPU per step, workers + protocol server + PostgreSQL)");
  out(`${"engine".padEnd(17)}${"off steps/s".padStart(13)}${"on steps/s".padStart(12)}${"cost".padStart(8)}${"CPU cost".padStart(10)}${"spans/step".padStart(12)}${"worker cpu ms off/on".padStart(22)}${"pg cpu ms off/on".padStart(18)}  runs off | on`);
  for (const row of rows) {
    out(
      `${row.engine.padEnd(17)}${String(row.offMedian).padStart(13)}${String(row.onMedian).padStart(12)}${`${row.costPercent}%`.padStart(8)}${`${row.cpuCostPercent}%`.padStart(10)}${String(row.spansPerStep).padStart(12)}` +
        `${`${row.workerCpuMsPerStep.off}/${row.workerCpuMsPerStep.on}`.padStart(22)}${`${row.postgresCpuMsPerStep.off}/${row.postgresCpuMsPerStep.on}`.padStart(18)}  ${row.offStepsPerS.join(", ")} | ${row.onStepsPerS.join(", ")}`,
    );
  }
}
