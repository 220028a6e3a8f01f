/**
 * Invariant 3: every lease expiry enters evidence-based recovery, and none silently re-runs an
 * ambiguous step. Each expiry gets exactly one recorded decision, even with several scanners at
 * once, and the decision follows the attempt's durable evidence.
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, observeResponse, persistRequestIdentity } from "./checkpoint";
import { claimSteps } from "./lease";
import { reportFailure, revokeLease, runRecoveryScan } from "./recovery";
import { registerSession } from "./session";
import { createSingleStepWorkflows, setLeaseExpiry, stepState, truncateEngineTables, servedFor } from "./test-support";
import type { LeaseHandle } from "./types";

// No adapter named "opaque" is registered, so it gets the most conservative contract.
const opaque = { adapter: "opaque", operation: "deliver", stepClass: "external" } as const;
const pure = { adapter: "pure", operation: "noop", stepClass: "pure" } as const;

async function claimAll(pool: import("pg").Pool, adapter: string, count: number) {
  const session = await registerSession(pool, "direct");
  const claimed = await claimSteps(pool, session, servedFor(adapter), count);
  return claimed.map((c): LeaseHandle => ({ stepId: c.stepId, fencingTerm: c.fencingTerm, sessionId: session }));
}

async function decisionsFor(pool: import("pg").Pool, stepId: string) {
  const { rows } = await pool.query<{ category: string; trigger: string; fencing_term: string }>(
    "SELECT category, trigger, fencing_term FROM recovery_decision WHERE step_id = $1 ORDER BY id",
    [stepId],
  );
  return rows;
}

// Tests in this file share one database; each starts from empty tables.
test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

describe("the recovery scan classifies by evidence", () => {
  test("no identity persisted: the step is made ready again", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    await claimAll(db.pool, "opaque", 1);
    await setLeaseExpiry(db.pool, stepId!, -1);
    await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
    expect(await decisionsFor(db.pool, stepId!)).toEqual([{ category: "make_ready", trigger: "lease_expired", fencing_term: "1" }]);
    expect(await stepState(db.pool, stepId!)).toBe("ready");
  });

  test("identity persisted, invocation not begun: retried with the same identity", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    await persistRequestIdentity(db.pool, lease!, "fl-x", "1");
    await setLeaseExpiry(db.pool, stepId!, -1);
    await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
    const { rows } = await db.pool.query("SELECT state, next_mode, request_identity FROM step WHERE id = $1", [stepId]);
    expect(rows[0]).toEqual({ state: "ready", next_mode: "retry_same_identity", request_identity: "fl-x" });
  });

  test("invocation began at an opaque destination: review case, never ready (invariant 7)", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    await persistRequestIdentity(db.pool, lease!, "fl-x", "1");
    await beginInvocation(db.pool, lease!);
    await setLeaseExpiry(db.pool, stepId!, -1);
    await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
    expect(await stepState(db.pool, stepId!)).toBe("indeterminate");
    const { rows } = await db.pool.query("SELECT status, reason, evidence->>'checkpoint' AS checkpoint FROM review_case WHERE step_id = $1", [stepId]);
    expect(rows).toEqual([{ status: "open", reason: expect.stringContaining("outcome unknown"), checkpoint: "invocation_began" }]);
    expect(await claimSteps(db.pool, lease!.sessionId, servedFor("opaque"), 5)).toEqual([]);
  });

  test("response observed but receipt missing: reconciled into a receipt, dependants released", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    await persistRequestIdentity(db.pool, lease!, "fl-x", "1");
    await beginInvocation(db.pool, lease!);
    await observeResponse(db.pool, lease!, "ext-42", { accepted: true });
    await setLeaseExpiry(db.pool, stepId!, -1);
    await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
    const { rows } = await db.pool.query(
      "SELECT r.external_reference, r.verification_method, r.fencing_term, s.state FROM receipt r JOIN step s ON s.id = r.step_id WHERE r.step_id = $1",
      [stepId],
    );
    expect(rows).toEqual([{ external_reference: "ext-42", verification_method: "direct_response", fencing_term: "1", state: "completed" }]);
  });

  test("an unexpired lease is left alone, whatever its evidence", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    await claimAll(db.pool, "opaque", 1);
    await setLeaseExpiry(db.pool, stepId!, 1_000);
    expect(await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" })).toEqual([]);
    expect(await stepState(db.pool, stepId!)).toBe("leased");
  });

  test("several scanners at once decide each expiry exactly once", async ({ db }) => {
    const steps = await createSingleStepWorkflows(db.pool, 60, pure);
    await claimAll(db.pool, "pure", 60);
    await db.pool.query("UPDATE lease SET leased_at = now() - interval '1 hour', expires_at = now() - interval '1 ms' WHERE ended_at IS NULL");
    const scans = await Promise.all(
      Array.from({ length: 4 }, (_, i) => runRecoveryScan(db.pool, { batchSize: 25, decidedBy: `scanner-${i}` })),
    );
    // Bounded batches: a second round picks up whatever the first left.
    const again = await Promise.all(Array.from({ length: 4 }, (_, i) => runRecoveryScan(db.pool, { batchSize: 25, decidedBy: `scanner-${i}` })));
    expect(scans.flat().length + again.flat().length).toBe(60);
    const { rows } = await db.pool.query<{ step_id: string; n: number }>(
      "SELECT step_id, count(*)::int AS n FROM recovery_decision WHERE step_id = ANY($1::uuid[]) GROUP BY step_id",
      [steps],
    );
    expect(rows).toHaveLength(60);
    expect(rows.every((row) => row.n === 1)).toBe(true);
  });
});

describe("failure reports and revocation also decide from evidence", () => {
  test("a failure before invocation makes the step ready after a backoff", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    const applied = await reportFailure(db.pool, lease!, "handler threw: boom");
    expect(applied.decision.category).toBe("make_ready");
    // Judged against the decision's own time (updated_at, the same statement's now()), not the
    // time this query runs: a backoff may have passed by then on a busy machine.
    const { rows } = await db.pool.query("SELECT state, next_eligible_at > updated_at AS waiting FROM step WHERE id = $1", [stepId]);
    expect(rows[0]).toEqual({ state: "ready", waiting: true });
    const attempt = await db.pool.query("SELECT outcome, outcome_reason FROM attempt WHERE step_id = $1", [stepId]);
    expect(attempt.rows[0]).toEqual({ outcome: "failed", outcome_reason: "handler threw: boom" });
  });

  test("a failure after the invocation began is an unknown outcome, not a licence to retry", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    await persistRequestIdentity(db.pool, lease!, "fl-x", "1");
    await beginInvocation(db.pool, lease!);
    const applied = await reportFailure(db.pool, lease!, "deadline exceeded");
    expect(applied.decision.category).toBe("review");
    expect(await stepState(db.pool, stepId!)).toBe("indeterminate");
  });

  test("a revoked lease is recorded, and recovery still decides from the evidence", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, opaque);
    const [lease] = await claimAll(db.pool, "opaque", 1);
    await persistRequestIdentity(db.pool, lease!, "fl-x", "1");
    const applied = await revokeLease(db.pool, stepId!, "stuck worker", "engineer@example.test");
    expect(applied?.decision.category).toBe("retry_same_identity");
    const { rows } = await db.pool.query("SELECT kind, reason FROM lease_event WHERE step_id = $1 AND kind = 'revoked'", [stepId]);
    expect(rows).toEqual([{ kind: "revoked", reason: "stuck worker (by engineer@example.test)" }]);
    await expect(persistRequestIdentity(db.pool, lease!, "fl-x", "1")).rejects.toMatchObject({ reason: "revoked" });
  });
});
