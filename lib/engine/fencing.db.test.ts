/**
 * Invariants 2 and 5. A worker whose lease is stale cannot commit any checkpoint or receipt for
 * the step: its renew, checkpoint and receipt are each refused, recorded as fencing rejections,
 * and their payloads kept as late observations. A completed step has exactly one receipt.
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, observeResponse, persistRequestIdentity } from "./checkpoint";
import { AuthorityLostError } from "./errors";
import { claimSteps, renewLeases } from "./lease";
import { commitReceipts } from "./receipt";
import { runRecoveryScan } from "./recovery";
import { registerSession } from "./session";
import { createSingleStepWorkflows, setLeaseExpiry, servedFor } from "./test-support";
import type { ClaimedStep, LeaseHandle } from "./types";
import { digestOf } from "./digest";
import { run } from "./db";
import { completeSteps } from "./sql/receipt";

const effect = (externalReference: string) =>
  ({ kind: "effect", externalReference, result: { ok: true }, verification: "direct_response" }) as const;

/** Worker A claims and reaches "invocation began", then loses its lease to worker B. */
async function staleWorkerScenario(pool: import("pg").Pool) {
  const [stepId] = await createSingleStepWorkflows(pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
  const a = await registerSession(pool, "direct");
  const b = await registerSession(pool, "direct");
  const [claimedByA] = await claimSteps(pool, a, servedFor("pure"), 1);
  const leaseA: LeaseHandle = { stepId: stepId!, fencingTerm: claimedByA!.fencingTerm, sessionId: a };
  await persistRequestIdentity(pool, leaseA, "fl-proposed", "1");
  await beginInvocation(pool, leaseA);
  await setLeaseExpiry(pool, stepId!, -1);
  await runRecoveryScan(pool, { batchSize: 10, decidedBy: "test" });
  const [claimedByB] = await claimSteps(pool, b, servedFor("pure"), 1);
  const leaseB: LeaseHandle = { stepId: stepId!, fencingTerm: claimedByB!.fencingTerm, sessionId: b };
  return { stepId: stepId!, a, b, leaseA, leaseB, claimedByB: claimedByB as ClaimedStep };
}

describe("a stale worker (invariant 2)", () => {
  test("is superseded by a newer term after its lease expired", async ({ db }) => {
    const { leaseA, leaseB } = await staleWorkerScenario(db.pool);
    expect(leaseA.fencingTerm).toBe(1n);
    expect(leaseB.fencingTerm).toBe(2n);
  });

  test("cannot renew", async ({ db }) => {
    const { a, leaseA } = await staleWorkerScenario(db.pool);
    const [result] = await renewLeases(db.pool, a, [{ ...leaseA, checkpointVersion: 3 }]);
    expect(result).toMatchObject({ renewed: false, reason: "superseded" });
  });

  test("cannot write a checkpoint, and its payload is kept as a late observation", async ({ db }) => {
    const { stepId, leaseA } = await staleWorkerScenario(db.pool);
    const refused = observeResponse(db.pool, leaseA, "ext-late-1", { delivered: true });
    await expect(refused).rejects.toBeInstanceOf(AuthorityLostError);
    await expect(refused).rejects.toMatchObject({ reason: "superseded", currentTerm: 2n });

    const { rows } = await db.pool.query(
      `SELECT r.operation, r.presented_term, r.current_term, r.reason, o.external_reference, o.result, o.request_identity
       FROM fencing_rejection r JOIN late_observation o ON o.id = r.late_observation_id WHERE r.step_id = $1`,
      [stepId],
    );
    expect(rows).toEqual([
      {
        operation: "observe_response",
        presented_term: "1",
        current_term: "2",
        reason: "superseded",
        external_reference: "ext-late-1",
        // A digest, never the payload: evidence must not carry request bodies or secrets.
        result: { digest: digestOf({ delivered: true }) },
        request_identity: "fl-proposed",
      },
    ]);
    const attempt = await db.pool.query("SELECT checkpoint, external_reference FROM attempt WHERE step_id = $1 AND fencing_term = 1", [stepId]);
    expect(attempt.rows[0]).toEqual({ checkpoint: "invocation_began", external_reference: null });
  });

  test("cannot commit a receipt; the current holder can, exactly once (invariant 5)", async ({ db }) => {
    const { stepId, a, b, leaseA, leaseB } = await staleWorkerScenario(db.pool);
    const [stale] = await commitReceipts(db.pool, a, [{ lease: leaseA, conclusion: effect("ext-A") }]);
    expect(stale).toMatchObject({ committed: false });
    if (stale?.committed !== false) throw new Error("unreachable");
    expect(stale.error).toMatchObject({ code: "authority_lost", reason: "superseded" });

    const [current] = await commitReceipts(db.pool, b, [{ lease: leaseB, conclusion: effect("ext-B") }]);
    expect(current).toMatchObject({ committed: true });

    const { rows } = await db.pool.query(
      `SELECT r.fencing_term, r.external_reference, r.request_identity, r.verification_method, a.fencing_term AS attempt_term, s.state
       FROM receipt r JOIN attempt a ON a.id = r.attempt_id JOIN step s ON s.id = r.step_id WHERE r.step_id = $1`,
      [stepId],
    );
    expect(rows).toEqual([
      { fencing_term: "2", external_reference: "ext-B", request_identity: "fl-proposed", verification_method: "direct_response", attempt_term: "2", state: "completed" },
    ]);
    const late = await db.pool.query("SELECT external_reference FROM late_observation WHERE step_id = $1 AND operation = 'commit_receipt'", [stepId]);
    expect(late.rows).toEqual([{ external_reference: "ext-A" }]);

    // A second receipt for the same step is refused by the database itself, in the statement
    // that writes receipts (receipt_step's primary key: receipts are partitioned by id).
    const { rows: written } = await db.pool.query<{ attempt_id: string }>("SELECT attempt_id FROM receipt WHERE step_id = $1", [stepId]);
    await expect(
      run(db.pool, completeSteps, [[written[0]!.attempt_id], ["manual_review"], ["completed"], [null], [null]]),
    ).rejects.toThrow(/receipt_one_per_step/);
    const { rows: receipts } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM receipt WHERE step_id = $1", [stepId]);
    expect(receipts[0]!.n).toBe(1);
  });

  test("the retry reuses the request identity the first attempt persisted", async ({ db }) => {
    const { leaseB, claimedByB } = await staleWorkerScenario(db.pool);
    expect(claimedByB.requestIdentity).toBe("fl-proposed");
    expect(claimedByB.mode).toBe("execute");
    const persisted = await persistRequestIdentity(db.pool, leaseB, "fl-other-proposal", "1");
    expect(persisted.requestIdentity).toBe("fl-proposed");
  });

  test("history tables refuse updates and deletes", async ({ db }) => {
    const { stepId } = await staleWorkerScenario(db.pool);
    for (const table of ["lease_event", "recovery_decision"]) {
      await expect(db.pool.query(`UPDATE ${table} SET step_id = step_id WHERE step_id = $1`, [stepId])).rejects.toThrow(/append-only/);
      await expect(db.pool.query(`DELETE FROM ${table} WHERE step_id = $1`, [stepId])).rejects.toThrow(/append-only/);
    }
  });
});
