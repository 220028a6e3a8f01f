/**
 * Attempts and receipts are kept forever (SPEC.md), so retention never drops a month of them: a
 * month whose steps are all settled for good and that ended before the retention period is
 * detached and moved to the archive schema, where it stays queryable. Receipts go first; a month
 * of attempts that a still-attached receipt names stays, and so does a month holding a step that
 * is not settled, each reported with why. Lookups by id prune to one month.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { engineSchema } from "@/lib/db/schema.mjs";
import { archiveSchemaOf, detachExpiredSafetyState, ensureHistoryPartitions } from "./retention";
import { createSingleStepWorkflows, truncateEngineTables } from "./test-support";

const DAY_MS = 86_400_000;
const pure = { adapter: "retention-archive", operation: "deliver", stepClass: "external" } as const;

test.beforeEach(async ({ db }) => {
  // Archived months keep their foreign key to step: test cleanup drops them (nothing else may).
  const archive = archiveSchemaOf(engineSchema());
  const { rows } = await db.pool.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = $1", [archive]);
  for (const { name } of rows) await db.pool.query(`DROP TABLE "${archive}"."${name}"`);
  await truncateEngineTables(db.pool);
});

/** An attempt of `stepId` begun `daysAgo` days ago (its id from that moment), ended unless `open`; returns its id. */
async function attemptAt(pool: Pool, stepId: string, daysAgo: number, { open = false } = {}): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, input_digest, deadline_at, created_at,
                          checkpoint, outcome, ended_at, policy_version, expires_at, end_reason)
     SELECT fl_uuid_v7(t), s.id, s.workflow_id, 1, 1, gen_random_uuid(), 'execute', 'digest', t + interval '1 minute', t,
            'receipt_committed', CASE WHEN $3 THEN NULL ELSE 'effect' END::attempt_outcome, CASE WHEN $3 THEN NULL ELSE t END, 1,
            t + interval '30 seconds', CASE WHEN $3 THEN NULL ELSE 'receipt' END::lease_end_reason
     FROM step s, (SELECT now() - $2::int * interval '1 day' AS t) at
     WHERE s.id = $1
     RETURNING id`,
    [stepId, daysAgo, open],
  );
  return rows[0]!.id;
}

/** The receipt of `attemptId`, written `daysAgo` days ago; the step completes. */
async function receiptAt(pool: Pool, attemptId: string, daysAgo: number): Promise<string> {
  const { rows } = await pool.query<{ id: string; step_id: string }>(
    `INSERT INTO receipt (id, workflow_id, step_id, attempt_id, input_digest, verification_method, fencing_term, epoch, created_at)
     SELECT fl_uuid_v7(t), a.workflow_id, a.step_id, a.id, a.input_digest, 'direct_response', a.fencing_term, a.epoch, t
     FROM attempt a, (SELECT now() - $2::int * interval '1 day' AS t) at
     WHERE a.id = $1
     RETURNING id, step_id`,
    [attemptId, daysAgo],
  );
  await pool.query("UPDATE step SET state = 'completed' WHERE id = $1", [rows[0]!.step_id]);
  return rows[0]!.id;
}

const partitionOf = async (pool: Pool, table: string, id: string) =>
  (await pool.query<{ partition: string }>(`SELECT tableoid::regclass::text AS partition FROM ${table} WHERE id = $1`, [id])).rows[0]?.partition;

test("settled old months are detached into the archive schema, receipts first; held and referenced months stay", async ({ db }) => {
  await ensureHistoryPartitions(db.pool, new Date(Date.now() - 200 * DAY_MS));
  const [archived, held, referenced, recent] = await createSingleStepWorkflows(db.pool, 4, pure);
  // 160 days ago: a settled step, its attempt and receipt. 100 days ago: an attempt still open
  // (its step is leased), and the attempt of a step whose receipt came only last week.
  const archivedAttempt = await attemptAt(db.pool, archived!, 160);
  const archivedReceipt = await receiptAt(db.pool, archivedAttempt, 160);
  await db.pool.query("UPDATE step SET state = 'leased' WHERE id = $1", [held]);
  const heldAttempt = await attemptAt(db.pool, held!, 100, { open: true });
  const referencedAttempt = await attemptAt(db.pool, referenced!, 100);
  await receiptAt(db.pool, referencedAttempt, 7);
  const recentReceipt = await receiptAt(db.pool, await attemptAt(db.pool, recent!, 7), 7);

  const attemptMonthOld = (await partitionOf(db.pool, "attempt", archivedAttempt))!;
  const receiptMonthOld = (await partitionOf(db.pool, "receipt", archivedReceipt))!;
  const attemptMonthHeld = (await partitionOf(db.pool, "attempt", heldAttempt))!;
  expect(attemptMonthOld).toMatch(/^attempt_\d{4}_\d{2}$/);
  expect(await partitionOf(db.pool, "attempt", referencedAttempt)).toBe(attemptMonthHeld);

  const expired = await detachExpiredSafetyState(db.pool, { keepMs: 30 * DAY_MS });
  const byName = new Map(expired.map((month) => [month.partition, month]));
  expect(byName.get(receiptMonthOld)).toMatchObject({ table: "receipt", rows: 1, detached: true });
  expect(byName.get(attemptMonthOld)).toMatchObject({ table: "attempt", rows: 1, heldBySteps: 0, referencedBy: 0, detached: true });
  // The open attempt's step holds its month, and the receipt of last week names the other attempt in it.
  expect(byName.get(attemptMonthHeld)).toMatchObject({ table: "attempt", rows: 2, heldBySteps: 1, referencedBy: 1, detached: false });
  // Receipts were detached before attempts.
  expect(expired.findIndex((month) => month.partition === receiptMonthOld)).toBeLessThan(expired.findIndex((month) => month.partition === attemptMonthOld));
  // Nothing recent, nothing legacy, no default partition is ever considered.
  expect(expired.every((month) => /^(attempt|receipt)_\d{4}_\d{2}$/.test(month.partition))).toBe(true);
  expect(await partitionOf(db.pool, "receipt", recentReceipt)).toMatch(/^receipt_\d{4}_\d{2}$/);

  // Detached, not dropped: gone from the engine's tables, queryable in the archive schema.
  const archive = archiveSchemaOf(engineSchema());
  expect(await partitionOf(db.pool, "attempt", archivedAttempt)).toBeUndefined();
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM "${archive}"."${attemptMonthOld}" WHERE id = $1) AS attempts,
            (SELECT count(*)::int FROM "${archive}"."${receiptMonthOld}" WHERE attempt_id = $1) AS receipts`,
    [archivedAttempt],
  );
  expect(rows[0]).toEqual({ attempts: 1, receipts: 1 });
  // Still permanent there.
  await expect(db.pool.query(`DELETE FROM "${archive}"."${receiptMonthOld}"`)).rejects.toThrow(/receipt is permanent/);

  // Once the held step settles, the month still stays: last week's attached receipt names one of its attempts.
  await db.pool.query("UPDATE attempt SET ended_at = now(), end_reason = 'expired' WHERE id = $1", [heldAttempt]);
  await db.pool.query("UPDATE step SET state = 'failed' WHERE id = $1", [held]);
  const again = await detachExpiredSafetyState(db.pool, { keepMs: 30 * DAY_MS });
  expect(again.find((month) => month.partition === attemptMonthHeld)).toMatchObject({ heldBySteps: 0, referencedBy: 1, detached: false });
});

test("a lookup of an attempt by id reads one month", async ({ db }) => {
  await ensureHistoryPartitions(db.pool, new Date(Date.now() - 200 * DAY_MS));
  const [stepId] = await createSingleStepWorkflows(db.pool, 1, pure);
  const attemptId = await attemptAt(db.pool, stepId!, 160);
  const { rows } = await db.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) SELECT * FROM attempt WHERE id = '${attemptId}'`);
  const scanned = rows.map((row) => row["QUERY PLAN"]).filter((line) => / on attempt_/.test(line));
  expect(scanned).toHaveLength(1);
  expect(scanned[0]).toContain(await partitionOf(db.pool, "attempt", attemptId));
});
