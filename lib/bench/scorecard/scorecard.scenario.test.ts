/**
 * The scorecard's small version, inside `npm test`: one contract (idempotent), two engines
 * (Fenceline and pg-boss), every fault of the full run on real worker, destination and PostgreSQL
 * processes. It fails if Fenceline records a duplicate effect or loses a job at the destination,
 * and — so that it cannot pass by doing nothing — if a fault did not happen or an effect could not
 * be told to its job. The peer's figures are what they are: counted, never judged here.
 */
import { expect, inject, test } from "vitest";
import { runScorecard, SCORECARD_SEED } from "./scorecard";

const JOBS = 2;

test("under every fault Fenceline applies each job once at an idempotent destination, and pg-boss is counted beside it", { timeout: 420_000 }, async () => {
  const lines: string[] = [];
  const result = await runScorecard({
    engines: ["fenceline", "pgBoss"],
    contracts: ["idempotent"],
    jobsPerFault: JOBS,
    seed: SCORECARD_SEED,
    confirm: false,
    log: (line) => lines.push(line),
    signal: new AbortController().signal,
    serverUrl: inject("databaseServerUrl"),
  });
  const context = lines.join("\n");

  for (const run of result.runs) {
    expect(run.problems, context).toEqual([]);
    expect(run.unattributedEffects, context).toBe(0);
    const injected = Object.fromEntries(run.faults.map((fault) => [fault.fault, fault.injected]));
    expect(injected, `${run.engine}\n${context}`).toEqual({
      "answer-lost": { answersDropped: JOBS },
      sigkill: { callsInFlightAtKill: JOBS, sigkill: 1 },
      "db-restart": { callsInFlightAtRestart: JOBS, restarts: 1 },
      pause: { callsInFlightAtPause: JOBS, sigstop: 1, sigcont: 1 },
    });
    expect(run.workerRestarts, context).toBeGreaterThanOrEqual(1);
    expect(run.contracts.map((row) => row.jobs)).toEqual([4 * JOBS]);
  }

  const fenceline = result.rows.find((row) => row.engine === "fenceline")!;
  expect(fenceline, context).toMatchObject({ applied: { none: 0, once: 4 * JOBS, more: 0 }, duplicateEffects: 0, lost: 0, unsettled: 0 });
  expect(result.fencelineHolds).toBe(true);
  const pgBoss = result.rows.find((row) => row.engine === "pgBoss")!;
  expect(pgBoss.applied.none + pgBoss.applied.once + pgBoss.applied.more).toBe(4 * JOBS);
});
