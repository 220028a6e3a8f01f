/**
 * The checker itself can fail: rows that break each invariant, written straight into the tables
 * (no engine function), are reported with the right invariant and figures. A clean database
 * passes.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { createSchema } from "@/lib/demo/destination/sql";
import { dbTest as test } from "@/lib/db/test-database";
import { createStepClass } from "@/lib/engine/test-support";
import { createWorkflows } from "@/lib/engine/workflow";
import { checkInvariants } from "./checker";

test("a clean database passes, and rows that break invariants 1–10, 12 and 13 are each reported", async ({ db }) => {
  await db.pool.query(createSchema);
  await createStepClass(db.pool, "checker", { leaseTtlMs: 1_500, renewEveryMs: 500, attemptDeadlineMs: 20_000, graceMs: 500 });
  const created = await createWorkflows(db.pool, [
    { kind: "t", input: {}, requester: "t", steps: [{ name: "deliver", adapter: "fenced", operation: "deliver", stepClass: "checker" }] },
    { kind: "t", input: {}, requester: "t", steps: [{ name: "deliver", adapter: "opaque", operation: "deliver", stepClass: "checker" }] },
  ]);
  const ids = created.map((workflow) => workflow.workflowId);

  const clean = await checkInvariants({ engine: db.pool, destination: db.pool, acknowledgedWorkflowIds: [] });
  expect(clean.invariants.filter((invariant) => !invariant.passed)).toEqual([]);

  const [fenced, opaque] = created.map((workflow) => ({ workflowId: workflow.workflowId, stepId: workflow.stepIds.get("deliver")! }));
  const session = randomUUID();
  const attempt = async (step: { workflowId: string; stepId: string }, term: number, checkpoint: string, identity: string | null) => {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, request_identity, input_digest, checkpoint, deadline_at, invocation_began_at,
                            policy_version, expires_at, ended_at, end_reason)
       VALUES ($1, $2, $3, $4, 1, $5, 'execute', $6, 'd', $7::attempt_checkpoint, now() + interval '1 minute', CASE WHEN $7::text <> 'created' THEN now() END,
               1, now() + interval '10 seconds', now(), 'expired')`,
      [id, step.stepId, step.workflowId, term, session, identity, checkpoint],
    );
    return id;
  };
  const lease = (attemptId: string, endReason: string | null) =>
    // The attempt carries its lease: written ended (so that several terms can exist), then opened
    // or given its end here.
    db.pool.query(
      `UPDATE lease SET leased_at = now() - interval '1 second', expires_at = now() + interval '10 seconds',
                        ended_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END, end_reason = $2::lease_end_reason
       WHERE attempt_id = $1`,
      [attemptId, endReason],
    );

  // Fenced step: term 1 "expired" but still inside its TTL while term 2 was granted (1), with no
  // recovery decision (3); term 1 invoked without an identity (4); a receipt from term 1 after
  // term 2 existed (2); the step is not completed although it has a receipt (5).
  const first = await attempt(fenced!, 1, "invocation_began", null);
  await lease(first, "expired");
  const second = await attempt(fenced!, 2, "created", null);
  await lease(second, null);
  await db.pool.query(
    `INSERT INTO receipt (workflow_id, step_id, attempt_id, input_digest, verification_method, fencing_term, epoch)
     VALUES ($1, $2, $3, 'd', 'direct_response', 1, 1)`,
    [fenced!.workflowId, fenced!.stepId, first],
  );
  // Opaque step invoked twice (7), its unknown outcome outside review (5, 7).
  const opaqueFirst = await attempt(opaque!, 1, "invocation_began", "fl-x");
  await lease(opaqueFirst, "failed");
  const opaqueSecond = await attempt(opaque!, 2, "invocation_began", "fl-x");
  await lease(opaqueSecond, "failed");
  // The destination applied one identity twice (6) and accepted an older term after a newer one (2).
  await db.pool.query(
    `INSERT INTO destination.effect (kind, resource, request_identity, epoch, term, payload_digest, external_reference, result)
     VALUES ('fenced', 'r', 'fl-a', 1, 2, 'p', 'e1', '{}'), ('fenced', 'r', 'fl-a', 1, 1, 'p', 'e2', '{}')`,
  );

  // A timer fired before its due time (9); an event marked consumed by a step that never waited for it (10).
  await db.pool.query(
    `INSERT INTO timer (step_id, workflow_id, state, due_at, requested, settled_at) VALUES ($1, $2, 'fired', now() + interval '1 minute', '{"afterMs": 60000}', now())`,
    [fenced!.stepId, fenced!.workflowId],
  );
  await db.pool.query(
    `INSERT INTO event (name, correlation_key, payload, payload_digest, sender, keep_until, consumed_by_step_id, consumed_at)
     VALUES ('checker.test', 'k', '{}', 'd', 'test', now() + interval '1 day', $1, now())`,
    [opaque!.stepId],
  );

  // Invariant 13. An every-second schedule (catch-up all) with a second missing between its
  // firings, and a request started under its key that no firing records.
  const { rows: [schedule] } = await db.pool.query<{ id: string }>(
    `INSERT INTO schedule (name, owner, kind, version, input, cron, time_zone, catch_up, catch_up_limit, created_by, next_due_at, last_due_at)
     VALUES ('checker', 'schedule', 't', 1, '{}', '* * * * * *', 'UTC', 'all', 100, 'test', '2026-01-01T00:00:03Z', '2026-01-01T00:00:02Z') RETURNING id`,
  );
  await db.pool.query(
    `INSERT INTO schedule_firing (schedule_id, due_at, state, reason, fired_at) VALUES ($1, '2026-01-01T00:00:00Z', 'skipped', 'test', '2026-01-01T00:00:00.1Z'), ($1, '2026-01-01T00:00:02Z', 'skipped', 'test', '2026-01-01T00:00:02.1Z')`,
    [schedule!.id],
  );
  const scheduled = (key: string) => createWorkflows(db.pool, [{ kind: "t", input: {}, requester: "t", idempotencyKey: key, steps: [{ name: "deliver", adapter: "fenced", operation: "deliver", stepClass: "checker" }] }]);
  await scheduled(`schedule:${schedule!.id}:2026-01-01T00:00:01.000Z`);
  // A due time started before its time: its request is created now, its key names 2099; the
  // firing's own clock says after (the request, not the firing record, is the evidence).
  const [early] = await scheduled(`schedule:${schedule!.id}:2099-01-01T00:00:00.000Z`);
  await db.pool.query(`INSERT INTO schedule_firing (schedule_id, due_at, state, request_id, fired_at) VALUES ($1, '2099-01-01T00:00:00Z', 'started', $2, '2099-01-01T00:00:05Z')`, [schedule!.id, early!.workflowId]);
  // An every-second schedule with catch-up latest whose one firing started a due time long past
  // (not the latest when its request was created), and three later due times not counted missed.
  const { rows: [latest] } = await db.pool.query<{ id: string }>(
    `INSERT INTO schedule (name, owner, kind, version, input, cron, time_zone, catch_up, catch_up_limit, created_by, next_due_at, last_due_at, missed)
     VALUES ('checker-latest', 'schedule', 't', 1, '{}', '* * * * * *', 'UTC', 'latest', 1, 'test', '2026-01-01T00:00:14Z', '2026-01-01T00:00:13Z', 1) RETURNING id`,
  );
  const [stale] = await scheduled(`schedule:${latest!.id}:2026-01-01T00:00:10.000Z`);
  await db.pool.query(`INSERT INTO schedule_firing (schedule_id, due_at, state, request_id, fired_at) VALUES ($1, '2026-01-01T00:00:10Z', 'started', $2, now())`, [latest!.id, stale!.workflowId]);

  // A request read cancelled while its undo has no receipt, the undo of a step that had none (12).
  const [undone] = await createWorkflows(db.pool, [
    {
      kind: "t",
      input: {},
      requester: "t",
      steps: [
        { name: "deliver", adapter: "opaque", operation: "deliver", stepClass: "checker" },
        { name: "deliver.undo", adapter: "opaque", operation: "compensate", stepClass: "checker" },
      ],
    },
  ]);
  await db.pool.query(`UPDATE step SET undoes_step_id = $1 WHERE id = $2`, [undone!.stepIds.get("deliver"), undone!.stepIds.get("deliver.undo")]);
  await db.pool.query(`UPDATE workflow SET status = 'cancelled' WHERE id = $1`, [undone!.workflowId]);

  const checked = await checkInvariants({ engine: db.pool, destination: db.pool, acknowledgedWorkflowIds: [...ids, randomUUID()] });
  const failed = Object.fromEntries(checked.invariants.map((invariant) => [invariant.id, invariant.passed]));
  expect(failed).toEqual({ 1: false, 2: false, 3: false, 4: false, 5: false, 6: false, 7: false, 8: false, 9: false, 10: false, 12: false, 13: false });
  const undos = checked.invariants.find((invariant) => invariant.id === 12)!;
  expect(undos.witnesses.map((witness) => (witness as { check: string }).check)).toEqual([
    "undo steps of a step without a receipt, or of a completed request",
    "requests cancelled, or their undoing finished, with an undo that has no receipt",
  ]);
  const schedules = checked.invariants.find((invariant) => invariant.id === 13)!;
  expect(schedules.witnesses.map((witness) => (witness as { check: string }).check)).toEqual([
    "schedule due times that started more than one request, or a firing and its request disagreeing",
    "due times of every-second schedules with catch-up all that have no firing, or were counted missed",
    "firings of every-second schedules with catch-up latest or none that were not the latest due time, or due times neither fired nor counted missed",
    "firings of every-second schedules with catch-up latest or none that were not the latest due time, or due times neither fired nor counted missed",
    "schedule due times started before their time (database clock)",
  ]);
  expect(checked.staleWritesAccepted).toBeGreaterThanOrEqual(2);
  expect(checked.duplicateEffects).toBe(1);
  // Both workflows are unfinished, and one acknowledged id does not exist at all.
  expect(checked.lostRequests).toBe(3);
  expect(checked.unknownOutsideReview).toBeGreaterThanOrEqual(1);
});
