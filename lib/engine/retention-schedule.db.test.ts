/**
 * Retention on a schedule: every coordinator offers to run the job, and maintenance_run's guarded
 * claim lets one run begin per interval, by the database clock, however many offer at once. A
 * run that fails clears its claim so the next offer retries; the coordinator makes the offer
 * with its recovery passes, and the job it runs creates the months ahead.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import { runScheduledRetention } from "./retention";

const HOUR_MS = 3_600_000;
const schedule = { everyMs: 24 * HOUR_MS, keepMs: 30 * 24 * HOUR_MS };

/** Drops lease_event's month furthest ahead, as if maintenance had lapsed; returns its name. */
async function dropFurthestMonth(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT max(relname) AS name FROM pg_class WHERE relname LIKE 'lease\\_event\\_2%' AND relkind = 'r' AND relispartition",
  );
  await pool.query(`DROP TABLE "${rows[0]!.name}"`);
  return rows[0]!.name;
}

test.beforeEach(async ({ db }) => {
  await db.pool.query("UPDATE maintenance_run SET started_at = NULL, finished_at = NULL, report = NULL WHERE job = 'retention'");
});

test("of several processes offering at once, one runs the job; none again until the interval has passed", async ({ db }) => {
  const offers = await Promise.all(Array.from({ length: 4 }, () => runScheduledRetention(db.pool, schedule)));
  expect(offers.filter((report) => report !== null)).toHaveLength(1);
  const { rows } = await db.pool.query("SELECT started_at, finished_at, report FROM maintenance_run WHERE job = 'retention'");
  expect(rows[0].finished_at).not.toBeNull();
  expect(rows[0].report).toHaveProperty("expired");

  expect(await runScheduledRetention(db.pool, schedule)).toBeNull();
  // The last run began a day and a minute ago on the database clock: due again.
  await db.pool.query("UPDATE maintenance_run SET started_at = now() - interval '1 day 1 minute' WHERE job = 'retention'");
  expect(await runScheduledRetention(db.pool, schedule)).not.toBeNull();
});

test("a run that fails clears its claim, so the next offer runs it", async ({ db }) => {
  await dropFurthestMonth(db.pool);
  const blocker = await db.pool.connect();
  try {
    // A reader in an open transaction: creating the month again needs the parent to itself, and
    // the job gives up after its lock timeout.
    await blocker.query("BEGIN");
    await blocker.query("SELECT count(*) FROM lease_event");
    await expect(runScheduledRetention(db.pool, schedule)).rejects.toThrow(/lock timeout/);
  } finally {
    await blocker.query("ROLLBACK");
    blocker.release();
  }
  const { rows } = await db.pool.query("SELECT started_at, report FROM maintenance_run WHERE job = 'retention'");
  expect(rows[0].started_at).toBeNull();
  expect(rows[0].report.error).toMatch(/lock timeout/);
  expect(await runScheduledRetention(db.pool, schedule)).not.toBeNull();
});

test("a coordinator with a schedule runs the job from its recovery pass: the months ahead appear", async ({ db }) => {
  const month = await dropFurthestMonth(db.pool);

  const coordinator = directCoordinator(db.pool, { retention: schedule });
  try {
    await coordinator.recover("retention-schedule-test", 10);
  } finally {
    await coordinator.close();
  }
  expect((await db.pool.query("SELECT to_regclass($1) AS made", [month])).rows[0].made).not.toBeNull();
  const { rows: run } = await db.pool.query("SELECT finished_at FROM maintenance_run WHERE job = 'retention'");
  expect(run[0].finished_at).not.toBeNull();
});
