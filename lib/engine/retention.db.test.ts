/**
 * The retention job prunes audit detail of settled steps and nothing else: evidence of a step
 * under review, receipts, attempts and review cases stay. Outside the job, history stays
 * append-only.
 */
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { pruneAuditDetail } from "./retention";
import { registerSession } from "./session";
import { createSingleStepWorkflows, truncateEngineTables, servedFor } from "./test-support";

const DAY_MS = 86_400_000;

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

async function evidenceOf(pool: import("pg").Pool, stepId: string) {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM lease_event WHERE step_id = $1) AS lease_events,
            (SELECT count(*)::int FROM late_observation WHERE step_id = $1) AS late_observations,
            (SELECT count(*)::int FROM fencing_rejection WHERE step_id = $1) AS fencing_rejections,
            (SELECT count(*)::int FROM receipt WHERE step_id = $1) AS receipts,
            (SELECT count(*)::int FROM attempt WHERE step_id = $1) AS attempts,
            (SELECT count(*)::int FROM review_case WHERE step_id = $1) AS review_cases`,
    [stepId],
  );
  return rows[0];
}

/** Audit detail written 40 days ago (inserting is what history tables allow). */
async function oldEvidence(pool: import("pg").Pool, stepId: string) {
  await pool.query(
    `INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, at)
     VALUES ($1, 1, 1, gen_random_uuid(), 'renewed', 'old', now() - interval '40 days')`,
    [stepId],
  );
  const { rows } = await pool.query(
    `INSERT INTO late_observation (step_id, fencing_term, epoch, operation, at) VALUES ($1, 1, 1, 'commit_receipt', now() - interval '40 days') RETURNING id`,
    [stepId],
  );
  await pool.query(
    `INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner, current_term, current_epoch, reason, late_observation_id, at)
     VALUES ($1, 'commit_receipt', 1, 1, gen_random_uuid(), 2, 1, 'superseded', $2, now() - interval '40 days')`,
    [stepId, rows[0].id],
  );
}

test("prunes old audit detail of settled steps; keeps recent detail, safety state, and everything of a step under review", async ({ db }) => {
  const [settled, underReview] = await createSingleStepWorkflows(db.pool, 2, { adapter: "dest", operation: "deliver", stepClass: "external" });
  const session = await registerSession(db.pool, "direct");
  const claimed = await claimSteps(db.pool, session, servedFor("dest"), 2);
  const lease = (stepId: string) => {
    const step = claimed.find((c) => c.stepId === stepId)!;
    return { stepId, fencingTerm: step.fencingTerm, sessionId: session };
  };
  await commitReceipts(db.pool, session, [{ lease: lease(settled!), conclusion: { kind: "effect", externalReference: "x-1", result: null, verification: "direct_response" } }]);
  await db.pool.query("UPDATE lease SET ended_at = now(), end_reason = 'revoked' WHERE step_id = $1", [underReview]);
  await db.pool.query("UPDATE step SET state = 'indeterminate' WHERE id = $1", [underReview]);
  await db.pool.query("INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by) SELECT id, workflow_id, 'unknown', '{}', now() + interval '1 day' FROM step WHERE id = $1", [underReview]);
  await oldEvidence(db.pool, settled!);
  await oldEvidence(db.pool, underReview!);
  const before = { settled: await evidenceOf(db.pool, settled!), underReview: await evidenceOf(db.pool, underReview!) };

  const pruned = await pruneAuditDetail(db.pool, { keepMs: 30 * DAY_MS, batchSize: 1_000 });

  expect(pruned).toEqual({ leaseEvents: 1, fencingRejections: 1, lateObservations: 1, recoveryDecisions: 0 });
  expect(await evidenceOf(db.pool, settled!)).toEqual({
    ...before.settled,
    lease_events: before.settled.lease_events - 1,
    late_observations: 0,
    fencing_rejections: 0,
  });
  expect(await evidenceOf(db.pool, underReview!)).toEqual(before.underReview);
});

test("outside the retention job history stays append-only, and receipts are never deleted, not even by it", async ({ db }) => {
  const [stepId] = await createSingleStepWorkflows(db.pool, 1, { adapter: "dest", operation: "deliver", stepClass: "external" });
  const session = await registerSession(db.pool, "direct");
  const [step] = await claimSteps(db.pool, session, servedFor("dest"), 1);
  await commitReceipts(db.pool, session, [
    { lease: { stepId: stepId!, fencingTerm: step!.fencingTerm, sessionId: session }, conclusion: { kind: "effect", externalReference: "x-1", result: null, verification: "direct_response" } },
  ]);
  await oldEvidence(db.pool, stepId!);
  await expect(db.pool.query("DELETE FROM lease_event")).rejects.toThrow(/append-only/);
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL fenceline.retention = 'on'");
    await expect(client.query("DELETE FROM receipt")).rejects.toThrow(/receipt is permanent/);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
});
