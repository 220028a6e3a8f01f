/**
 * The retention job drops whole months of audit detail and nothing else: a month that holds
 * evidence of a step under review stays until that step settles; receipts, attempts and review
 * cases stay. Partition maintenance creates the months ahead and moves rows that landed in the
 * default partition into their month. Outside the job, history stays append-only.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { dropExpiredHistory, ensureHistoryPartitions, MONTHS_AHEAD } from "./retention";
import { registerSession } from "./session";
import { createSingleStepWorkflows, truncateEngineTables, servedFor } from "./test-support";

const DAY_MS = 86_400_000;
/** Old enough that its whole month ended more than 30 days ago. */
const OLD = "now() - interval '75 days'";

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

async function evidenceOf(pool: Pool, stepId: string) {
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

/** Audit detail written 75 days ago (inserting is what history tables allow). */
async function oldEvidence(pool: Pool, stepId: string) {
  await pool.query(
    `INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, at)
     VALUES ($1, 1, 1, gen_random_uuid(), 'renewed', 'old', ${OLD})`,
    [stepId],
  );
  const { rows } = await pool.query(
    `INSERT INTO late_observation (step_id, fencing_term, epoch, operation, at) VALUES ($1, 1, 1, 'commit_receipt', ${OLD}) RETURNING id`,
    [stepId],
  );
  await pool.query(
    `INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner, current_term, current_epoch, reason, late_observation_id, at)
     VALUES ($1, 'commit_receipt', 1, 1, gen_random_uuid(), 2, 1, 'superseded', $2, ${OLD})`,
    [stepId, rows[0].id],
  );
}

/** The partition that holds the table's oldest row. */
async function partitionOf(pool: Pool, table: string): Promise<string> {
  const { rows } = await pool.query(`SELECT tableoid::regclass::text AS partition FROM ${table} ORDER BY at LIMIT 1`);
  return rows[0].partition;
}

async function setUp(pool: Pool) {
  const [settled, underReview] = await createSingleStepWorkflows(pool, 2, { adapter: "dest", operation: "deliver", stepClass: "external" });
  const session = await registerSession(pool, "direct");
  const claimed = await claimSteps(pool, session, servedFor("dest"), 2);
  const lease = (stepId: string) => ({ stepId, fencingTerm: claimed.find((c) => c.stepId === stepId)!.fencingTerm, sessionId: session });
  await commitReceipts(pool, session, [{ lease: lease(settled!), conclusion: { kind: "effect", externalReference: "x-1", result: null, verification: "direct_response" } }]);
  await pool.query("UPDATE lease SET ended_at = now(), end_reason = 'revoked' WHERE step_id = $1", [underReview]);
  await pool.query("UPDATE step SET state = 'indeterminate' WHERE id = $1", [underReview]);
  await pool.query("INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by) SELECT id, workflow_id, 'unknown', '{}', now() + interval '1 day' FROM step WHERE id = $1", [underReview]);
  return { settled: settled!, underReview: underReview! };
}

test("maintenance creates the months ahead and moves rows from the default partition into their month", async ({ db }) => {
  const { settled } = await setUp(db.pool);
  await oldEvidence(db.pool, settled);
  expect(await partitionOf(db.pool, "lease_event")).toBe("lease_event_default");

  const created = await ensureHistoryPartitions(db.pool);

  const { rows } = await db.pool.query(`SELECT to_char((${OLD}) AT TIME ZONE 'UTC', 'YYYY_MM') AS old_month, to_char((now() + interval '${MONTHS_AHEAD} months') AT TIME ZONE 'UTC', 'YYYY_MM') AS ahead`);
  expect(created).toContain(`lease_event_${rows[0].old_month}`);
  // A table gets past months only for rows it holds: no recovery decision is that old.
  expect(created).not.toContain(`recovery_decision_${rows[0].old_month}`);
  expect(await partitionOf(db.pool, "lease_event")).toBe(`lease_event_${rows[0].old_month}`);
  expect(await partitionOf(db.pool, "fencing_rejection")).toBe(`fencing_rejection_${rows[0].old_month}`);
  const ahead = await db.pool.query("SELECT to_regclass($1) IS NOT NULL AS present", [`lease_event_${rows[0].ahead}`]);
  expect(ahead.rows[0].present).toBe(true);
  const stray = await db.pool.query("SELECT (SELECT count(*) FROM lease_event_default) + (SELECT count(*) FROM late_observation_default) + (SELECT count(*) FROM fencing_rejection_default) AS n");
  expect(Number(stray.rows[0].n)).toBe(0);
  expect(await ensureHistoryPartitions(db.pool)).toEqual([]);
});

test("drops an expired month only once no unsettled step has evidence in it; keeps recent detail and safety state", async ({ db }) => {
  const { settled, underReview } = await setUp(db.pool);
  await oldEvidence(db.pool, settled);
  await oldEvidence(db.pool, underReview);
  await ensureHistoryPartitions(db.pool);
  const before = { settled: await evidenceOf(db.pool, settled), underReview: await evidenceOf(db.pool, underReview) };

  const held = await dropExpiredHistory(db.pool, { keepMs: 30 * DAY_MS });

  expect(held.filter((month) => month.rows > 0).map(({ table, rows, heldBySteps, dropped }) => ({ table, rows, heldBySteps, dropped }))).toEqual([
    { table: "fencing_rejection", rows: 2, heldBySteps: 1, dropped: false },
    { table: "late_observation", rows: 2, heldBySteps: 1, dropped: false },
    { table: "lease_event", rows: 2, heldBySteps: 1, dropped: false },
  ]);
  expect(await evidenceOf(db.pool, underReview)).toEqual(before.underReview);
  expect(await evidenceOf(db.pool, settled)).toEqual(before.settled);

  await db.pool.query("UPDATE review_case SET status = 'resolved', resolution = 'confirm_delivered', resolved_at = now(), resolved_by = 'test' WHERE step_id = $1", [underReview]);
  await db.pool.query("UPDATE step SET state = 'completed' WHERE id = $1", [underReview]);
  const dropped = await dropExpiredHistory(db.pool, { keepMs: 30 * DAY_MS });

  expect(dropped.filter((month) => month.rows > 0).every((month) => month.dropped && month.heldBySteps === 0)).toBe(true);
  expect(dropped.filter((month) => month.rows > 0)).toHaveLength(3);
  // This month's events (the claim's `acquired`) are younger than the policy: kept.
  expect(await evidenceOf(db.pool, settled)).toEqual({ ...before.settled, lease_events: before.settled.lease_events - 1, late_observations: 0, fencing_rejections: 0 });
  expect(await evidenceOf(db.pool, underReview)).toEqual({ ...before.underReview, lease_events: before.underReview.lease_events - 1, late_observations: 0, fencing_rejections: 0 });
  expect(await dropExpiredHistory(db.pool, { keepMs: 30 * DAY_MS })).toEqual(dropped.filter((month) => !month.dropped));
});

test("outside the retention job history stays append-only, and receipts are never deleted, not even by it", async ({ db }) => {
  const [stepId] = await createSingleStepWorkflows(db.pool, 1, { adapter: "dest", operation: "deliver", stepClass: "external" });
  const session = await registerSession(db.pool, "direct");
  const [step] = await claimSteps(db.pool, session, servedFor("dest"), 1);
  await commitReceipts(db.pool, session, [
    { lease: { stepId: stepId!, fencingTerm: step!.fencingTerm, sessionId: session }, conclusion: { kind: "effect", externalReference: "x-1", result: null, verification: "direct_response" } },
  ]);
  await oldEvidence(db.pool, stepId!);
  await ensureHistoryPartitions(db.pool);
  await expect(db.pool.query("DELETE FROM lease_event")).rejects.toThrow(/append-only/);
  await expect(db.pool.query("UPDATE lease_event SET reason = 'changed'")).rejects.toThrow(/append-only/);
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
