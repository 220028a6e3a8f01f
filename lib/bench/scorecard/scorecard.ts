/**
 * The scorecard (issue 36): the same faults on every engine of the bench, what landed counted at
 * the destination. One run per engine with the run seed, engines one after another on the same
 * machine; then every engine that showed a failure (a duplicate effect, a job lost, a stale write
 * accepted) runs again with a second seed, and a failure is reported only where it reproduces.
 * `npm run scorecard` and `npm run bench -- --only scorecard` both run this.
 */
import { cpus, loadavg } from "node:os";
import { exit } from "@/lib/cli/command";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { ThrowawayCluster } from "@/lib/scenarios/cluster";
import { deriveSeed } from "@/lib/scenarios/matrix";
import type { Contract } from "@/lib/scenarios/types";
import { round } from "../stats";
import { peerVersionsByPackage } from "./peers";
import { runEngine, SETTLE_WINDOW_MS, type ScorecardEnvironment } from "./run";
import { ENGINE_LABEL, SCORECARD_FAULTS, type ContractFigures, type RunResult, type ScorecardEngine } from "./types";

/** The seed of the published run; `--seed` chooses another. */
export const SCORECARD_SEED = 20261206;
export const DEFAULT_JOBS_PER_FAULT = 4;

export type ScorecardOptions = {
  readonly engines: readonly ScorecardEngine[];
  readonly contracts: readonly Contract[];
  readonly jobsPerFault: number;
  readonly seed: number;
  /** Run failing engines again with a second seed (off only for a quick look). */
  readonly confirm: boolean;
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
  /** The PostgreSQL server (its `postgres` database) for the destinations' databases; DATABASE_URL's or the embedded one when unset. */
  readonly serverUrl?: string;
};

/** What a row shows of the engine's failures: kinds of harm, each counted at the destination. */
type Harm = "duplicates" | "lost" | "staleAccepted";

const harmsOf = (figures: ContractFigures): Harm[] => [
  ...(figures.duplicateEffects > 0 ? (["duplicates"] as const) : []),
  ...(figures.lost > 0 ? (["lost"] as const) : []),
  ...(figures.staleWritesAccepted > 0 ? (["staleAccepted"] as const) : []),
];

export type ScorecardRow = ContractFigures & {
  readonly engine: ScorecardEngine;
  /** Harms in the run seed's run. */
  readonly harms: readonly Harm[];
  /** Harms that the second seed's run showed too: the only ones reported as failures. Null when no second run was made. */
  readonly reproduced: readonly Harm[] | null;
  /** The second seed's figures for this row, when it ran. */
  readonly confirmation: ContractFigures | null;
};

export type ScorecardResult = {
  readonly seed: number;
  readonly confirmSeed: number;
  readonly command: string;
  readonly jobsPerFault: number;
  readonly contracts: readonly Contract[];
  readonly faults: typeof SCORECARD_FAULTS;
  readonly settleWindowMs: number;
  readonly rows: readonly ScorecardRow[];
  readonly runs: readonly RunResult[];
  readonly confirmations: readonly RunResult[];
  /** Fenceline's own promises, by contract: no duplicate where the destination deduplicates or checks the term, none at an opaque one (never repeated), nothing lost, nothing stale accepted, everything settled. */
  readonly fencelineHolds: boolean;
  readonly machine: {
    readonly cpu: string;
    readonly loadAverageBefore: number[];
    readonly loadAverageAfter: number[];
    readonly node: string;
    readonly engineServer: string;
    readonly versions: Record<string, string>;
  };
  readonly durationMs: number;
};

/** Fenceline promises no duplicate at a queryable destination only when no request is held past the status query (README, Guarantees). */
export function fencelineRowHolds(row: ContractFigures): boolean {
  const duplicatesAllowed = row.contract === "queryable";
  return (duplicatesAllowed || row.duplicateEffects === 0) && row.lost === 0 && row.staleWritesAccepted === 0 && row.unsettled === 0;
}

export function scorecardCommand(options: Pick<ScorecardOptions, "engines" | "contracts" | "jobsPerFault" | "seed">): string {
  return `npm run scorecard -- --seed ${options.seed} --jobs ${options.jobsPerFault} --engines ${options.engines.join(",")} --contracts ${options.contracts.join(",")}`;
}

export async function runScorecard(options: ScorecardOptions): Promise<ScorecardResult> {
  const { engines, contracts, jobsPerFault, seed, log, signal } = options;
  const startedAt = Date.now();
  const loadAverageBefore = loadavg().map((value) => round(value, 2));
  const confirmSeed = deriveSeed(seed, "confirm");
  const serverUrl = options.serverUrl ?? (await resolveDatabaseUrl({ database: "postgres" })).url;
  const cluster = await ThrowawayCluster.start();
  const destroyOnExit = () => cluster.destroyNow();
  process.on("exit", destroyOnExit);
  const environment: ScorecardEnvironment = { serverUrl, cluster };
  const runs: RunResult[] = [];
  const confirmations: RunResult[] = [];
  try {
    const run = async (engine: ScorecardEngine, runSeed: number) => {
      log(`${ENGINE_LABEL[engine]}, seed ${runSeed}: ${contracts.join(", ")}; faults ${SCORECARD_FAULTS.join(", ")}`);
      const result = await runEngine(environment, { engine, seed: runSeed, contracts, jobsPerFault, log, signal });
      for (const row of result.contracts) log(`  ${row.contract}: ${describe(row)}`);
      for (const problem of result.problems) log(`  problem: ${problem}`);
      return result;
    };
    for (const engine of engines) runs.push(await run(engine, seed));
    if (options.confirm) {
      // Reversed, so no engine always runs first.
      for (const result of [...runs].reverse()) {
        if (result.contracts.some((row) => harmsOf(row).length > 0)) confirmations.push(await run(result.engine, confirmSeed));
      }
    }
  } finally {
    process.off("exit", destroyOnExit);
    await cluster.destroy();
  }
  const rows: ScorecardRow[] = runs.flatMap((result) => {
    const second = confirmations.find((confirmation) => confirmation.engine === result.engine);
    return result.contracts.map((figures) => {
      const confirmation = second?.contracts.find((row) => row.contract === figures.contract) ?? null;
      const harms = harmsOf(figures);
      return {
        ...figures,
        engine: result.engine,
        harms,
        reproduced: confirmation ? harms.filter((harm) => harmsOf(confirmation).includes(harm)) : null,
        confirmation,
      };
    });
  });
  return {
    seed,
    confirmSeed,
    command: scorecardCommand(options),
    jobsPerFault,
    contracts,
    faults: SCORECARD_FAULTS,
    settleWindowMs: SETTLE_WINDOW_MS,
    rows,
    runs,
    confirmations,
    fencelineHolds: rows.filter((row) => row.engine === "fenceline").every(fencelineRowHolds),
    machine: {
      cpu: `${cpus().length} x ${cpus()[0]?.model ?? "unknown"}`,
      loadAverageBefore,
      loadAverageAfter: loadavg().map((value) => round(value, 2)),
      node: process.version,
      engineServer: "PostgreSQL 15 (a throwaway cluster of the harness's own, fsync off)",
      versions: await peerVersionsByPackage(),
    },
    durationMs: Date.now() - startedAt,
  };
}

/**
 * Runs `work` with SIGINT and SIGTERM turned into an abort: the runs stop at their next wait and
 * clean up (workers, destination, cluster, databases); then the command exits with 128 + the
 * signal's number. The workers and the destination share the terminal's process group and stop on
 * a SIGINT by themselves; the harness's cluster does not (pg_ctl starts it in a session of its own).
 */
export async function untilInterrupted<T>(work: (signal: AbortSignal) => Promise<T>, log: (line: string) => void): Promise<T> {
  const interrupted = new AbortController();
  let code = 0;
  const listeners = ([["SIGINT", 130], ["SIGTERM", 143]] as const).map(([name, exitCode]) => {
    const listener = () => {
      if (interrupted.signal.aborted) return;
      log(`${name}: stopping the runs and cleaning up`);
      code = exitCode;
      interrupted.abort(new Error(`interrupted by ${name}`));
    };
    process.on(name, listener);
    return [name, listener] as const;
  });
  try {
    return await work(interrupted.signal);
  } finally {
    for (const [name, listener] of listeners) process.off(name, listener);
    if (interrupted.signal.aborted) await exit(code);
  }
}

function describe(row: ContractFigures): string {
  return (
    `applied 0/1/2+ ${row.applied.none}/${row.applied.once}/${row.applied.more}, duplicate effects ${row.duplicateEffects}, ` +
    `stale rejected/accepted ${row.staleWritesRejected}/${row.staleWritesAccepted}, with a person ${row.withPerson}, lost ${row.lost}, unsettled ${row.unsettled}, ` +
    `settled within ${row.settleMs === null ? "-" : `${round(row.settleMs / 1000, 1)} s`}`
  );
}

const HARM_WORDS: Record<Harm, string> = { duplicates: "duplicate effects", lost: "jobs lost", staleAccepted: "stale writes accepted" };

/** The row's verdict as the table states it: a harm is reported only when the second seed showed it too. */
export function verdictOf(row: ScorecardRow): string {
  if (row.harms.length === 0) return row.unsettled > 0 ? "no harm seen; unsettled when the window closed" : "holds";
  if (row.engine === "fenceline" && fencelineRowHolds(row)) {
    return `${verdictOfHarms(row)}, within its stated limit (a call held past the status query)`;
  }
  return verdictOfHarms(row);
}

function verdictOfHarms(row: ScorecardRow): string {
  if (row.reproduced === null) return `${row.harms.map((harm) => HARM_WORDS[harm]).join(", ")} (not confirmed: no second run)`;
  const unconfirmed = row.harms.filter((harm) => !row.reproduced!.includes(harm));
  return [
    ...(row.reproduced.length > 0 ? [`${row.reproduced.map((harm) => HARM_WORDS[harm]).join(", ")} (reproduced with seed 2)`] : []),
    ...(unconfirmed.length > 0 ? [`${unconfirmed.map((harm) => HARM_WORDS[harm]).join(", ")} did not reproduce, not counted`] : []),
  ].join("; ");
}

/** The table, in Markdown (it reads the same in a terminal and pastes into the docs). */
export function renderScorecard(result: ScorecardResult): string {
  const lines: string[] = [];
  const cell = (value: number | null | undefined) => (value === null || value === undefined ? "–" : String(value));
  lines.push(
    `Scorecard: ${result.contracts.length} contract(s) × ${result.faults.length} faults (${result.faults.join(", ")}), ${result.jobsPerFault} jobs per contract and fault; ` +
      `seed ${result.seed} (second seed ${result.confirmSeed}); ${result.machine.cpu}; load average ${result.machine.loadAverageBefore.join(" / ")} → ${result.machine.loadAverageAfter.join(" / ")}; ` +
      `${Math.round(result.durationMs / 1000)} s`,
  );
  lines.push(`Repeat: ${result.command}`);
  lines.push("");
  lines.push("| engine | contract | jobs | applied 0 / 1 / 2+ | duplicate effects | stale writes rejected / accepted | with a person | lost | unsettled | settled within (s) | verdict |");
  lines.push("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const row of result.rows) {
    const stale = row.contract === "fenced" ? `${row.staleWritesRejected} / ${row.staleWritesAccepted}` : "–";
    const settle = row.settleMs === null ? `> ${result.settleWindowMs / 1000}` : String(round(row.settleMs / 1000, 1));
    lines.push(
      `| ${ENGINE_LABEL[row.engine]} | ${row.contract} | ${row.jobs} | ${row.applied.none} / ${row.applied.once} / ${row.applied.more} | ${row.duplicateEffects} | ${stale} | ` +
        `${row.withPerson} | ${row.lost} | ${row.unsettled} | ${settle} | ${verdictOf(row)} |`,
    );
  }
  lines.push("");
  lines.push(`By fault (the run seed's runs), each column per contract (${result.contracts.join(" / ")})`);
  lines.push("");
  lines.push(`| engine | fault | what the harness did | jobs with 2+ effects | never applied | settled within (s) | worker crashes |`);
  lines.push("|---|---|---|---|---|---|---|");
  for (const run of result.runs) {
    for (const fault of run.faults) {
      const perContract = (pick: (contract: Contract) => number) => result.contracts.map(pick).join(" / ");
      const settled = result.contracts.map((contract) => {
        const ms = fault.settledMs[contract];
        return ms === null || ms === undefined ? `> ${fault.windowMs / 1000}` : String(round(ms / 1000, 1));
      });
      const did = Object.entries(fault.injected).map(([what, n]) => `${what} ${n}`).join(", ");
      lines.push(
        `| ${ENGINE_LABEL[run.engine]} | ${fault.fault} | ${did} | ${perContract((contract) => fault.duplicatedBy[contract] ?? 0)} | ${perContract((contract) => fault.neverAppliedBy[contract] ?? 0)} | ${settled.join(" / ")} | ${fault.workerCrashes} |`,
      );
    }
  }
  const confirmed = result.rows.filter((row) => row.confirmation);
  if (confirmed.length > 0) {
    lines.push("");
    lines.push(`Second seed (${result.confirmSeed}), engines that showed a failure: applied 0 / 1 / 2+, duplicate effects, lost, unsettled`);
    for (const row of confirmed) {
      const second = row.confirmation!;
      lines.push(`- ${ENGINE_LABEL[row.engine]} × ${row.contract}: ${second.applied.none} / ${second.applied.once} / ${second.applied.more}, ${cell(second.duplicateEffects)}, ${second.lost}, ${second.unsettled}`);
    }
  }
  lines.push("");
  lines.push(`Fenceline ${result.fencelineHolds ? "kept" : "BROKE"} its promises in this run.`);
  return lines.join("\n");
}
