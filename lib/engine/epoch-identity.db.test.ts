/**
 * The database identity recorded with each epoch, against real PostgreSQL. A changed identity is
 * made here by rewriting the current epoch's recorded timeline, as a database restored from
 * another timeline would carry it; the real promotion is lib/scenarios/failover.scenario.test.ts.
 */
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { checkDatabaseIdentity, followDatabaseIdentity } from "./epoch-identity";
import { claimSteps } from "./lease";
import { registerSession } from "./session";
import { createSingleStepWorkflows, servedFor, truncateEngineTables } from "./test-support";

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE epoch_transition, destination_block; DELETE FROM epoch WHERE id > 1");
  await db.pool.query("UPDATE epoch SET system_identifier = DEFAULT, timeline = DEFAULT");
});

test("an epoch is stamped with the server's system identifier and the timeline it writes on", async ({ db }) => {
  const { rows } = await db.pool.query<{ system: string; wal: string }>(
    "SELECT system_identifier::text AS system, pg_walfile_name(pg_current_wal_insert_lsn()) AS wal FROM pg_control_system()",
  );
  const check = await checkDatabaseIdentity(db.pool);
  expect(check.current).toEqual({ system: rows[0]!.system, timeline: parseInt(rows[0]!.wal.slice(0, 8), 16) });
  expect(check.recorded).toEqual(check.current);
  expect(check.changed).toBe(false);
  expect(await followDatabaseIdentity(db.pool, { requestedBy: "test", drainTimeoutMs: 0 })).toBeNull();
  expect((await db.pool.query("SELECT 1 FROM epoch_transition")).rowCount).toBe(0);
});

test("a changed timeline starts one epoch transition, audited with the change, and the new epoch is stamped", async ({ db }) => {
  await db.pool.query("UPDATE epoch SET timeline = timeline + 7 WHERE id = 1");
  const before = await checkDatabaseIdentity(db.pool);
  expect(before.changed).toBe(true);

  const outcomes: string[] = [];
  const options = { requestedBy: "test", drainTimeoutMs: 0, recordOutcome: async (_client: unknown, outcome: { reason: string }) => void outcomes.push(outcome.reason) };
  // Two coordinators notice it at once: one transition.
  const followed = await Promise.all([followDatabaseIdentity(db.pool, options), followDatabaseIdentity(db.pool, options)]);
  const transitions = followed.filter((result) => result !== null);
  expect(transitions).toHaveLength(1);
  const reason = `database identity changed: system ${before.current.system} timeline ${before.recorded.timeline} → ${before.current.timeline}`;
  expect(outcomes).toEqual([reason]);
  expect(transitions[0]!.transition).toMatchObject({ fromEpoch: 1n, toEpoch: 2n, state: "completed" });
  const { rows } = await db.pool.query<{ reason: string; state: string }>("SELECT reason, state FROM epoch_transition");
  expect(rows).toEqual([{ reason, state: "completed" }]);

  const after = await checkDatabaseIdentity(db.pool);
  expect(after).toMatchObject({ epoch: "2", recorded: before.current, changed: false });
  expect(await followDatabaseIdentity(db.pool, options)).toBeNull();
});

test("another system identifier (a restore into another cluster) starts a transition too", async ({ db }) => {
  await db.pool.query("UPDATE epoch SET system_identifier = system_identifier - 1 WHERE id = 1");
  const followed = await followDatabaseIdentity(db.pool, { requestedBy: "test", drainTimeoutMs: 0 });
  expect(followed?.transition.toEpoch).toBe(2n);
  const { rows } = await db.pool.query<{ reason: string }>("SELECT reason FROM epoch_transition");
  expect(rows[0]!.reason).toMatch(/^database identity changed: system \d+ → \d+ timeline \d+ → \d+$/);
});

test("while the identity differs from the current epoch's, no term is handed out", async ({ db }) => {
  await createSingleStepWorkflows(db.pool, 1, { adapter: "fenced", operation: "o", stepClass: "pure" });
  const session = await registerSession(db.pool, "direct");
  await db.pool.query("UPDATE epoch SET timeline = timeline + 1 WHERE id = 1");
  await expect(claimSteps(db.pool, session, servedFor("fenced"), 1)).rejects.toMatchObject({ code: "FL001" });
  const { rows } = await db.pool.query<{ state: string; fencing_term: string }>("SELECT state, fencing_term::text FROM step");
  expect(rows).toEqual([{ state: "ready", fencing_term: "0" }]);

  await followDatabaseIdentity(db.pool, { requestedBy: "test", drainTimeoutMs: 0 });
  const [claimed] = await claimSteps(db.pool, session, servedFor("fenced"), 1);
  expect({ epoch: claimed?.epoch, term: claimed?.fencingTerm }).toEqual({ epoch: 2n, term: 1n });
});

test("a connection that cached the system identifier still refuses a term once the recorded one differs", async ({ db }) => {
  await createSingleStepWorkflows(db.pool, 2, { adapter: "fenced", operation: "o", stepClass: "pure" });
  const client = await db.pool.connect();
  try {
    const session = await registerSession(client, "direct");
    // The first claim on this connection caches the server's system identifier in the session.
    expect(await claimSteps(client, session, servedFor("fenced"), 1)).toHaveLength(1);
    expect((await client.query<{ cached: string }>("SELECT current_setting('fenceline.system_identifier') AS cached")).rows[0]!.cached).toMatch(/^\d+$/);
    await client.query("UPDATE epoch SET system_identifier = system_identifier + 1 WHERE id = 1");
    await expect(claimSteps(client, session, servedFor("fenced"), 1)).rejects.toMatchObject({ code: "FL001" });
  } finally {
    client.release();
  }
});

test("a transition left open under the old identity is abandoned, and the change gets its own", async ({ db }) => {
  // Begun on the old primary (timeline one below), its process gone with it.
  await db.pool.query(`INSERT INTO epoch_transition (from_epoch, reason, requested_by, timeline) SELECT 1, 'manual', 'cli', timeline - 1 FROM epoch WHERE id = 1`);
  await db.pool.query("UPDATE epoch SET timeline = timeline - 1 WHERE id = 1");
  const followed = await followDatabaseIdentity(db.pool, { requestedBy: "test", drainTimeoutMs: 0 });
  expect(followed?.transition).toMatchObject({ toEpoch: 2n, state: "completed" });
  const { rows } = await db.pool.query<{ reason: string; state: string; error: string | null }>(
    "SELECT reason, state, destinations ->> 'error' AS error FROM epoch_transition ORDER BY id",
  );
  expect(rows).toEqual([
    { reason: "manual", state: "failed", error: expect.stringMatching(/^left open by a failover: database identity changed/) },
    { reason: expect.stringMatching(/^database identity changed/), state: "completed", error: null },
  ]);
});

test("an open transition under the server's own identity is left alone", async ({ db }) => {
  await db.pool.query(`INSERT INTO epoch_transition (from_epoch, reason, requested_by) VALUES (1, 'manual', 'cli')`);
  await db.pool.query("UPDATE epoch SET timeline = timeline - 1 WHERE id = 1");
  expect(await followDatabaseIdentity(db.pool, { requestedBy: "test", drainTimeoutMs: 0 })).toBeNull();
  expect((await db.pool.query("SELECT state FROM epoch_transition")).rows).toEqual([{ state: "stopping" }]);
});
