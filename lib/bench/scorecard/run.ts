/**
 * One scorecard run: one engine, one seed, fresh databases (the engine's on a throwaway PostgreSQL
 * cluster the harness may restart, the destination's on the project's server), the synthetic
 * destination in its own process, and the engine's worker under a supervisor. The four faults
 * (types.ts) follow one another, each on a batch of its own: `jobsPerFault` jobs for every
 * contract, sent side by side so the contracts meet each fault at the same moment. Every timing
 * the harness chooses is drawn from the seed alone, in the same order for every engine, so all
 * engines of a seed meet the same schedule. The figures are counted at the destination (count.ts);
 * only "with a person", "unsettled" and the settle times are the engine's own word.
 */
import pg from "pg";
import { seededRandom } from "@/lib/demo/destination/faults";
import { createEmptyDatabase, dropDatabase, migratedDatabase, type ThrowawayCluster } from "@/lib/scenarios/cluster";
import { DestinationProcess, sleep } from "@/lib/scenarios/processes";
import type { Contract } from "@/lib/scenarios/types";
import { countAtDestination, type DestinationCount } from "./count";
import { openDriver, type EngineDriver } from "./drivers";
import { Fleet } from "./fleet";
import {
  SCORECARD_FAULTS,
  type ContractFigures,
  type EngineOutcome,
  type FaultFigures,
  type LogicalJob,
  type RunResult,
  type ScorecardEngine,
  type ScorecardFault,
} from "./types";

export type ScorecardEnvironment = {
  /** The project's PostgreSQL (its `postgres` database): the destination's databases. */
  readonly serverUrl: string;
  /** A cluster of the harness's own: the engines' databases, restarted by the db-restart fault. */
  readonly cluster: ThrowawayCluster;
};

export type RunOptions = {
  readonly engine: ScorecardEngine;
  readonly seed: number;
  readonly contracts: readonly Contract[];
  /** Jobs per contract in each fault's batch. */
  readonly jobsPerFault: number;
  readonly log: (line: string) => void;
  /** Aborted when the command is interrupted: the run stops at its next wait and cleans up. */
  readonly signal: AbortSignal;
};

/**
 * How long the destination holds each batch's calls before applying them, so the fault lands while
 * they are in flight. The pause must outlast every lease and visibility timeout it is meant to
 * pass (Fenceline's `external` class: 10 s; pg-boss: expireInSeconds 10 plus a supervise pass),
 * with the rescuer's start on top, so the rescuer's call lands before the held one.
 */
const HOLD_MS: Record<Exclude<ScorecardFault, "answer-lost">, number> = { sigkill: 2_000, "db-restart": 1_500, pause: 16_000 };
/** Spread added to each held call by the destination's seeded draw. */
const HOLD_JITTER_MS = 300;
/** From the fault (the resume, for the pause): how long the engine has to settle the batch. */
export const SETTLE_WINDOW_MS = 30_000;
const CALLS_IN_FLIGHT_TIMEOUT_MS = 30_000;
const POLL_MS = 200;

/** Waits for `probe` to answer something other than undefined; undefined after `timeoutMs`. Throws when `signal` aborts. */
async function poll<T>(probe: () => Promise<T | undefined>, timeoutMs: number, signal: AbortSignal): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) return undefined;
    await sleep(POLL_MS);
  }
}

async function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  while (Date.now() < at) {
    signal.throwIfAborted();
    await sleep(Math.min(POLL_MS, at - Date.now()));
  }
}

/** The world of one run, as the fault scripts see it. */
class Run {
  readonly jobs: LogicalJob[] = [];
  private readonly random: () => number;

  constructor(
    readonly options: RunOptions,
    readonly driver: EngineDriver,
    readonly fleet: Fleet,
    readonly destination: DestinationProcess,
    readonly destinationPool: pg.Pool,
    readonly cluster: ThrowawayCluster,
  ) {
    this.random = seededRandom(options.seed);
  }

  /** A whole number of ms in [min, max], from the seed. */
  draw(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  /** The next batch: `jobsPerFault` jobs per contract, enqueued. */
  async batch(fault: ScorecardFault): Promise<LogicalJob[]> {
    const { contracts, jobsPerFault, engine } = this.options;
    const batch = contracts.flatMap((contract) =>
      Array.from({ length: jobsPerFault }, (): LogicalJob => {
        const n = this.jobs.length + 1;
        const job = { n, contract, fault, payload: { scorecard: `${engine}/${contract}`, job: n } };
        this.jobs.push(job);
        return job;
      }),
    );
    await this.driver.enqueue(batch);
    return batch;
  }

  /** The destination holds every call of the run's contracts for about `ms` before applying it (null: no more). */
  async hold(ms: number | null): Promise<void> {
    const { seed, contracts } = this.options;
    if (ms === null) return this.destination.setFaults({ seed });
    const profile = { latency: { fixedMs: ms, jitterMs: HOLD_JITTER_MS } };
    await this.destination.setFaults({ seed, kinds: Object.fromEntries(contracts.map((contract) => [contract, profile])) });
  }

  /** Waits until `slot`'s worker has begun the call of every job of `batch`; answers how many it had. */
  async callsInFlight(slot: string, batch: readonly LogicalJob[]): Promise<number> {
    const calling = () => {
      const begun = this.driver.calling(this.fleet.worker(slot));
      return batch.filter((job) => begun.has(job.n)).length;
    };
    const all = await poll(async () => (calling() === batch.length ? batch.length : undefined), CALLS_IN_FLIGHT_TIMEOUT_MS, this.options.signal);
    if (all === undefined) this.options.log(`  only ${calling()} of ${batch.length} calls were in flight after ${CALLS_IN_FLIGHT_TIMEOUT_MS / 1000} s; the fault goes ahead`);
    return calling();
  }

  /**
   * Polls the engine until every job of `batch` is settled or `until`; answers, per contract, ms
   * from `faultAt` to the moment its jobs were (null: not by then). The engine's tables may be
   * unreachable for a while (the restart): that poll just counts as not settled.
   */
  async settle(batch: readonly LogicalJob[], faultAt: number, until: number): Promise<Partial<Record<Contract, number | null>>> {
    const settledAt = new Map<Contract, number>();
    const contracts = [...new Set(batch.map((job) => job.contract))];
    await poll(
      async () => {
        const outcomes = await this.driver.outcomes().catch(() => null);
        if (!outcomes) return undefined;
        for (const contract of contracts) {
          if (settledAt.has(contract)) continue;
          const done = batch.every((job) => job.contract !== contract || (outcomes.get(job.n) ?? "unsettled") !== "unsettled");
          if (done) settledAt.set(contract, Date.now());
        }
        return settledAt.size === contracts.length ? true : undefined;
      },
      Math.max(0, until - Date.now()),
      this.options.signal,
    );
    return Object.fromEntries(contracts.map((contract) => [contract, settledAt.has(contract) ? settledAt.get(contract)! - faultAt : null]));
  }

  async droppedResponses(): Promise<number> {
    return (await countAtDestination(this.destinationPool, [])).droppedResponses;
  }
}

type Script = (run: Run) => Promise<Omit<FaultFigures, "duplicatedBy" | "neverAppliedBy" | "workerCrashes">>;

/**
 * A fault struck while every call of a fresh batch is held at the destination, at a seeded moment
 * after the last one began; then the holding stops, so calls made after the fault go through.
 */
async function whileCallsHeld(
  run: Run,
  fault: "sigkill" | "db-restart",
  strike: () => Promise<void>,
  injected: (callsInFlight: number) => Record<string, number>,
): ReturnType<Script> {
  const hold = HOLD_MS[fault];
  await run.hold(hold);
  const batch = await run.batch(fault);
  const inFlight = await run.callsInFlight("w1", batch);
  await sleep(run.draw(100, 500));
  const faultAt = Date.now();
  await strike();
  await run.hold(null);
  const settledMs = await run.settle(batch, faultAt, faultAt + SETTLE_WINDOW_MS);
  // The held calls land whatever the engine says: the next batch must not meet them.
  await sleepUntil(faultAt + hold + HOLD_JITTER_MS, run.options.signal);
  return { fault, jobs: batch.length, settledMs, windowMs: SETTLE_WINDOW_MS, injected: injected(inFlight) };
}

const scripts: Record<ScorecardFault, Script> = {
  /** Every job's first request is applied and its answer dropped; whatever the engine does next is its own. */
  "answer-lost": async (run) => {
    const { seed, contracts, signal } = run.options;
    const droppedBefore = await run.droppedResponses();
    await run.destination.setFaults({ seed, dropFirstResponse: [...contracts] });
    const faultAt = Date.now();
    const batch = await run.batch("answer-lost");
    const settledMs = await run.settle(batch, faultAt, faultAt + SETTLE_WINDOW_MS);
    await run.destination.setFaults({ seed });
    signal.throwIfAborted();
    return { fault: "answer-lost", jobs: batch.length, settledMs, windowMs: SETTLE_WINDOW_MS, injected: { answersDropped: (await run.droppedResponses()) - droppedBefore } };
  },

  /** The worker is SIGKILLed while every call of the batch is held at the destination; the supervisor restarts it. */
  sigkill: (run) =>
    whileCallsHeld(run, "sigkill", async () => run.fleet.kill("w1"), (inFlight) => ({ callsInFlightAtKill: inFlight, sigkill: 1 })),

  /** The engine's PostgreSQL stops at once while the calls are held, stays down a second and starts again. */
  "db-restart": (run) =>
    whileCallsHeld(run, "db-restart", () => run.cluster.restart("immediate", 1_000), (inFlight) => ({ callsInFlightAtRestart: inFlight, restarts: 1 })),

  /**
   * The worker is SIGSTOPped with its calls held at the destination, past every lease and
   * visibility timeout; a second worker starts; the held calls land; then the first resumes.
   */
  pause: async (run) => {
    const hold = HOLD_MS.pause;
    await run.hold(hold);
    const batch = await run.batch("pause");
    const inFlight = await run.callsInFlight("w1", batch);
    // The requests leave right after the worker says so; let them reach the destination.
    await sleep(run.draw(250, 500));
    const faultAt = Date.now();
    run.fleet.pause("w1");
    await run.hold(null);
    const resumeAt = faultAt + hold + HOLD_JITTER_MS + 300;
    // Settling is watched from the fault on: an engine that hands the jobs to the rescuer settles before the resume.
    const settling = run.settle(batch, faultAt, resumeAt + SETTLE_WINDOW_MS);
    settling.catch(() => undefined);
    await run.fleet.start("w2");
    await sleepUntil(resumeAt, run.options.signal);
    run.fleet.resume("w1");
    const settledMs = await settling;
    return { fault: "pause", jobs: batch.length, settledMs, windowMs: SETTLE_WINDOW_MS, injected: { callsInFlightAtPause: inFlight, sigstop: 1, sigcont: 1 } };
  },
};

/** Fenced-destination figures belong to the fenced contract; the others show none. */
function figuresOf(contract: Contract, jobs: readonly LogicalJob[], count: DestinationCount, outcomes: Map<number, EngineOutcome>, faults: readonly FaultFigures[]): ContractFigures {
  const mine = jobs.filter((job) => job.contract === contract);
  const effects = (job: LogicalJob) => count.effects.get(job.n) ?? 0;
  const outcome = (job: LogicalJob) => outcomes.get(job.n) ?? "unsettled";
  const cross: Record<EngineOutcome, [number, number, number]> = { completed: [0, 0, 0], withPerson: [0, 0, 0], unsettled: [0, 0, 0] };
  for (const job of mine) cross[outcome(job)][Math.min(2, effects(job)) as 0 | 1 | 2] += 1;
  const settle = faults.map((fault) => fault.settledMs[contract]);
  return {
    contract,
    jobs: mine.length,
    applied: {
      none: mine.filter((job) => effects(job) === 0).length,
      once: mine.filter((job) => effects(job) === 1).length,
      more: mine.filter((job) => effects(job) > 1).length,
    },
    duplicateEffects: mine.reduce((sum, job) => sum + Math.max(0, effects(job) - 1), 0),
    staleWritesRejected: contract === "fenced" ? count.staleWritesRejected : 0,
    staleWritesAccepted: contract === "fenced" ? count.staleWritesAccepted : 0,
    withPerson: mine.filter((job) => outcome(job) === "withPerson").length,
    lost: mine.filter((job) => effects(job) === 0 && outcome(job) !== "withPerson").length,
    unsettled: mine.filter((job) => outcome(job) === "unsettled").length,
    settleMs: settle.some((ms) => ms === null || ms === undefined) ? null : Math.max(...(settle as number[])),
    outcomes: cross,
  };
}

export async function runEngine(environment: ScorecardEnvironment, options: RunOptions): Promise<RunResult> {
  const { engine, contracts, jobsPerFault, log, seed } = options;
  const startedAt = Date.now();
  const label = `scorecard_${engine.toLowerCase()}`;
  const problems: string[] = [];
  const engineUrl =
    engine === "fenceline" ? await migratedDatabase(environment.cluster.serverUrl, label) : await createEmptyDatabase(environment.cluster.serverUrl, label);
  const databases = [engineUrl];
  let destination: DestinationProcess | null = null;
  let driver: EngineDriver | null = null;
  let fleet: Fleet | null = null;
  let destinationPool: pg.Pool | null = null;
  const killOnExit = () => {
    fleet?.killNow();
    destination?.spawned.process.kill("SIGKILL");
  };
  process.on("exit", killOnExit);
  try {
    const destinationUrl = await createEmptyDatabase(environment.serverUrl, `${label}_dst`);
    databases.push(destinationUrl);
    destination = await DestinationProcess.start(destinationUrl);
    await destination.setFaults({ seed });
    destinationPool = new pg.Pool({ connectionString: destinationUrl, max: 2, application_name: "scorecard-count" });
    destinationPool.on("error", () => undefined);
    // Every call of a batch in flight at once, in one worker.
    driver = await openDriver(engine, { engineUrl, destinationUrl: destination.url, concurrency: contracts.length * jobsPerFault });
    fleet = new Fleet(driver, log, options.signal);
    await fleet.start("w1");
    const run = new Run(options, driver, fleet, destination, destinationPool, environment.cluster);
    const measured: Omit<FaultFigures, "duplicatedBy" | "neverAppliedBy">[] = [];
    for (const fault of SCORECARD_FAULTS) {
      log(`  ${fault}: ${contracts.length} × ${jobsPerFault} jobs`);
      const crashesBefore = fleet.crashes;
      const figures = { ...(await scripts[fault](run)), workerCrashes: fleet.crashes - crashesBefore };
      log(`    settled (ms after the fault): ${Object.entries(figures.settledMs).map(([contract, ms]) => `${contract} ${ms ?? `not within ${figures.windowMs / 1000} s`}`).join(", ")}`);
      measured.push(figures);
    }
    await fleet.stop();
    const count = await countAtDestination(destinationPool, run.jobs);
    const outcomes = await driver.outcomes();
    if (count.unattributed > 0) problems.push(`${count.unattributed} effect(s) at the destination match no job of the run`);
    const faults: FaultFigures[] = measured.map((figures) => {
      const jobsOf = (contract: Contract) => run.jobs.filter((job) => job.fault === figures.fault && job.contract === contract);
      const countOf = (test: (effects: number) => boolean) =>
        Object.fromEntries(contracts.map((contract) => [contract, jobsOf(contract).filter((job) => test(count.effects.get(job.n) ?? 0)).length]));
      return { ...figures, duplicatedBy: countOf((effects) => effects > 1), neverAppliedBy: countOf((effects) => effects === 0) };
    });
    return {
      engine,
      seed,
      settings: driver.settings,
      contracts: contracts.map((contract) => figuresOf(contract, run.jobs, count, outcomes, faults)),
      faults,
      unattributedEffects: count.unattributed,
      workerRestarts: fleet.restarts,
      durationMs: Date.now() - startedAt,
      problems,
    };
  } finally {
    await fleet?.stop().catch((error: unknown) => log(`  stopping the workers failed: ${String(error)}`));
    await driver?.close().catch(() => undefined);
    await destinationPool?.end().catch(() => undefined);
    await destination?.stop().catch(() => undefined);
    process.off("exit", killOnExit);
    await Promise.allSettled(databases.map(dropDatabase));
  }
}
