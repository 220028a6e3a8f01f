/**
 * A representative subset of the fault-scenario matrix (`npm run scenarios`) inside `npm test`:
 * real worker processes, the real destination process and real PostgreSQL. Each cell runs its
 * fault, settles, and the independent SQL checker decides invariants 1–10, 12 and 13; any broken invariant or
 * unmet expectation (a stale write rejected in the pause and clock cells, recovery latency within
 * its bound) fails the test with the checker's witnesses and the command that replays the cell.
 *
 * The subset covers every fault once and every contract at least once; the full matrix is the
 * CLI's job. Cells run one after another: this file shares two cores with another test file.
 */
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { openEnvironment, runCell, type Environment } from "./matrix";
import type { Contract, FaultKind } from "./types";

const SEED = Number(process.env.FENCELINE_SCENARIO_SEED ?? 20261129);

const subset: [FaultKind, Contract][] = [
  ["kill", "fenced"],
  ["pause", "fenced"],
  ["clock-offset", "idempotent"],
  ["drop-response", "queryable"],
  ["dup-recoverers", "opaque"],
  ["conn-kill", "idempotent"],
  ["db-restart", "queryable"],
  ["waits", "idempotent"],
  ["undo", "opaque"],
  ["schedule-takeover", "fenced"],
  ["undo-drop-response", "fenced"],
];

let environment: Environment;

beforeAll(async () => {
  environment = await openEnvironment({ serverUrl: inject("databaseServerUrl"), prepared: true });
});

afterAll(async () => {
  await environment?.close();
});

test.each(subset)("%s × %s keeps invariants 1–10, 12 and 13", { timeout: 120_000 }, async (fault, contract) => {
  const cell = await runCell(environment, fault, contract, SEED);
  const summary = {
    workflows: cell.workflows,
    faultsInjected: cell.faultsInjected,
    staleWritesRejected: cell.staleWritesRejected,
    recoveryLatencyMs: cell.recoveryLatencyMs,
    durationMs: cell.durationMs,
  };
  console.log(`${fault} × ${contract}: ${JSON.stringify({ ...summary, ...(cell.detail.waits ? { waits: cell.detail.waits } : {}), ...(cell.detail.schedules ? { schedules: cell.detail.schedules } : {}), ...(cell.detail.scheduleTakeover ? { scheduleTakeover: cell.detail.scheduleTakeover } : {}) })}`);
  expect(cell.failures, `replay: ${cell.replay}`).toEqual([]);
  expect(cell.invariants.filter((invariant) => !invariant.passed)).toEqual([]);
  expect({
    staleWritesAccepted: cell.staleWritesAccepted,
    duplicateEffects: cell.duplicateEffects,
    lostRequests: cell.lostRequests,
    unknownOutsideReview: cell.unknownOutsideReview,
  }).toEqual({ staleWritesAccepted: 0, duplicateEffects: 0, lostRequests: 0, unknownOutsideReview: 0 });
  expect(cell.passed).toBe(true);
});
