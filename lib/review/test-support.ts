/**
 * Brings a delivery to an open review case the way production does: a worker claims the opaque
 * step, persists its request identity, begins the call, and its lease expires unanswered; the
 * recovery scan then opens the case. Used by *.db.test.ts only.
 */
import type { Pool } from "pg";
import { persistRequestIdentity, beginInvocation } from "@/lib/engine/checkpoint";
import { claimSteps, releaseLease } from "@/lib/engine/lease";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { createRequest } from "@/lib/requests/create";
import { DELIVERY_SERVED, deliveryRequest, registerDelivery } from "@/lib/requests/test-support";

export type CaseUnderReview = { caseId: string; version: number; workflowId: string; trackingToken: string; stepIds: Record<string, string> };

/** Runs every step of a request before `deliver` to completion, without any destination. */
async function completeThrough(pool: Pool, workflowId: string, names: readonly string[]): Promise<void> {
  await pool.query(
    `WITH done AS (
       UPDATE step SET state = 'completed', completed_at = now(), updated_at = now()
       WHERE workflow_id = $1 AND name = ANY($2::text[]) RETURNING id
     ),
     receipts AS (
       INSERT INTO receipt (workflow_id, step_id, input_digest, verification_method, fencing_term, epoch)
       SELECT $1, s.id, s.input_digest, 'no_action_needed', 0, 1 FROM step s JOIN done d ON d.id = s.id
     ),
     progressed AS (
       UPDATE workflow SET steps_remaining = steps_remaining - (SELECT count(*) FROM done) WHERE id = $1
     )
     UPDATE step SET state = 'ready', pending_dependencies = 0 WHERE workflow_id = $1 AND name = 'deliver'`,
    [workflowId, names],
  );
}

export async function caseUnderReview(pool: Pool, recipient = "ada@example.test"): Promise<CaseUnderReview> {
  await registerDelivery(pool);
  const { request } = await createRequest(pool, deliveryRequest({ recipient, message: "hello", deliverVia: "opaque" }));
  await completeThrough(pool, request.id, ["prepare", "reserve"]);
  const { rows: steps } = await pool.query<{ id: string; name: string }>("SELECT id, name FROM step WHERE workflow_id = $1", [request.id]);
  const stepIds = Object.fromEntries(steps.map((s) => [s.name, s.id]));
  const sessionId = await registerSession(pool, "direct");
  // Earlier cases in the same database may have left steps ready: hand back all but ours.
  const claims = await claimSteps(pool, sessionId, DELIVERY_SERVED, 64);
  for (const other of claims.filter((step) => step.stepId !== stepIds.deliver)) {
    await releaseLease(pool, { stepId: other.stepId, fencingTerm: other.fencingTerm, sessionId }, "not this test's step");
  }
  const claimed = claims.find((step) => step.stepId === stepIds.deliver);
  if (!claimed) throw new Error("caseUnderReview: the deliver step was not claimed");
  const lease = { stepId: claimed.stepId, fencingTerm: claimed.fencingTerm, sessionId };
  await persistRequestIdentity(pool, lease, `fl-${claimed.stepId}`, "1");
  await beginInvocation(pool, lease);
  await setLeaseExpiry(pool, claimed.stepId, -1);
  await runRecoveryScan(pool, { batchSize: 10, decidedBy: "test" });
  const { rows } = await pool.query<{ id: string; version: number }>("SELECT id, version FROM review_case WHERE step_id = $1 AND status = 'open'", [claimed.stepId]);
  if (!rows[0]) throw new Error("caseUnderReview: recovery opened no review case");
  return { caseId: rows[0].id, version: rows[0].version, workflowId: request.id, trackingToken: request.trackingToken, stepIds };
}
