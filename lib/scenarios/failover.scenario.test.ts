/**
 * The failover cells inside npm test (lib/scenarios/failover.ts): a real primary and a real
 * streaming standby (PostgreSQL 15, pg_basebackup), the primary SIGKILLed under traffic, the
 * standby promoted, real worker and destination processes finding it through a host list. The
 * independent checker decides invariants 1–8; the first coordinator to see the new timeline runs
 * the epoch transition, audited with the change. Synchronous: nothing acknowledged is lost.
 * Asynchronous (the primary's WAL sender held 800 ms before the kill): requests are lost, every
 * one acknowledged after the standby's last received WAL position, and fencing still holds.
 * The Patroni tier (patroni-cluster.ts) runs its synchronous cell here too: the leader's agent and
 * postmaster SIGKILLed, Patroni promoting the replica once the leader key's TTL has run out.
 */
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { failoverFindings, type FailoverFigures } from "./failover";
import { openEnvironment, runCell, type Environment } from "./matrix";
import type { CellResult } from "./types";

const SEED = Number(process.env.FENCELINE_SCENARIO_SEED ?? 20261204);

let environment: Environment;

beforeAll(async () => {
  environment = await openEnvironment({ serverUrl: inject("databaseServerUrl"), prepared: true });
});

afterAll(async () => {
  await environment?.close();
});

/** The checker's figures and the failover's own findings, one block for every failover cell of either tier. */
function expectFailoverHeld(cell: CellResult): void {
  expect(cell.failures, `replay: ${cell.replay}`).toEqual([]);
  expect({
    staleWritesAccepted: cell.staleWritesAccepted,
    duplicateEffects: cell.duplicateEffects,
    lostRequests: cell.lostRequests,
    unknownOutsideReview: cell.unknownOutsideReview,
  }).toEqual({ staleWritesAccepted: 0, duplicateEffects: 0, lostRequests: 0, unknownOutsideReview: 0 });
  const failover = cell.detail.failover as FailoverFigures | undefined;
  expect(failover, "the cell measured its failover").toBeDefined();
  expect(failoverFindings(failover!)).toEqual([]);
  expect(cell.passed).toBe(true);
}

test.each([
  ["failover-sync", "fenced"],
  ["failover-async", "idempotent"],
  // Patroni's own leader election: its TTL makes this cell 20–30 s here, inside npm test's budget.
  ["failover-patroni-sync", "fenced"],
] as const)("%s × %s: the promoted standby gets a new epoch and invariants 1–8 hold", { timeout: 90_000 }, async (fault, contract) => {
  const cell = await runCell(environment, fault, contract, SEED);
  console.log(`${fault} × ${contract}: ${JSON.stringify({ workflows: cell.workflows, staleWritesRejected: cell.staleWritesRejected, durationMs: cell.durationMs, ...(cell.detail.failover as object) })}`);
  expectFailoverHeld(cell);
});
