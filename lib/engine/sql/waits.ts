/**
 * The seam between the core and the rooms that hold waiting steps (timers, event waits): a step
 * parks (its attempt ends, it holds no lease, nothing claims it), and later its room settles it
 * with a receipt or fails it. Each statement here is guarded by the step's state; the room's own
 * statement, in the same transaction, has already moved its record out of `waiting`, which is
 * what makes a settlement happen at most once.
 */
import type { NamedSql } from "../db";
import { holdsAuthority } from "./authority";
import { completionOf } from "./receipt";

/**
 * Takes the row of step $1's request before the step parks: the order a cancel takes them in, so
 * a cancel that commits first is seen by the park's guard, and no step parks in an ended request.
 */
export const lockRequestOfStep: NamedSql = {
  name: "fl_lock_request_of_step",
  text: `SELECT w.id FROM workflow w JOIN step s ON s.workflow_id = w.id WHERE s.id = $1 FOR UPDATE OF w`,
};

/**
 * An SQL expression that asks for the steps this transaction makes ready to be announced after it
 * commits, not with it (migration 20261209100000): NOTIFY holds a cluster-wide lock through the
 * commit's WAL flush, so transactions that notify cannot share a flush. A room's statement may
 * select it; the caller then sends notifyStepsReady once committed.
 */
export const stepsReadyNotifiedAfterCommit = `set_config('fenceline.step_ready_notify', 'after_commit', true)`;

/** Wakes the workers (their LISTEN on `fenceline_step_ready`): alone in its transaction it writes no WAL and waits for no flush. */
export const notifyStepsReady: NamedSql = {
  name: "fl_notify_steps_ready",
  text: `SELECT pg_notify('fenceline_step_ready', '')`,
};

/**
 * Session $1 parks ($2 step, $3 term) with reason $4: the attempt that armed the wait concludes as
 * `waiting`, its lease ends as released, and the step waits. Fenced by the authority guard; only
 * an attempt whose invocation never began may park (a wait step calls no destination). Returns
 * what the room needs: the step, its request, the arming attempt, and when the step became ready
 * (its last dependency's completion, or the request's creation), from which durations count.
 */
export const parkStep: NamedSql = {
  name: "fl_park_step",
  text: `
WITH authority AS (
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'released', outcome = 'waiting', outcome_reason = $4
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
    AND l.checkpoint IN ('created', 'identity_persisted')
  RETURNING l.id, l.step_id, l.workflow_id
),
parked AS (
  UPDATE step s
  SET state = 'waiting', state_reason = $4, updated_at = now()
  FROM authority a
  WHERE s.id = a.step_id AND s.state = 'leased'
  RETURNING s.id, s.workflow_id
)
SELECT p.id AS step_id, p.workflow_id, a.id AS attempt_id, now() AS db_now,
       coalesce((SELECT max(d.completed_at) FROM step_dependency sd JOIN step d ON d.id = sd.depends_on_step_id WHERE sd.step_id = p.id),
                w.created_at) AS ready_at
FROM parked p JOIN authority a ON a.step_id = p.id JOIN workflow w ON w.id = p.workflow_id`,
};

/**
 * Settles the waiting steps of CTE `source` (step_id, observed_result, verification_method,
 * external_reference), whose ids the array expression `ids` gives, with receipts. The receipt is
 * the arming attempt's (the step's current term), so it names the term and epoch that armed the
 * wait; the completion then releases dependants and completes the request as any receipt does.
 * Only a step still waiting, of a request still active, settles; the CTE `written` holds the
 * receipts. A room's own statement may end with it, after the transition of its record.
 */
export const waitingStepsSettled = (source: string, ids: string): string => `settling AS (
  SELECT a.id AS attempt_id, s.id AS step_id, s.workflow_id, a.input_digest, a.adapter_version, a.request_identity,
         r.external_reference, r.observed_result, r.verification_method, 'completed'::step_state AS step_state,
         a.fencing_term, a.epoch
  FROM ${source} r
  JOIN step s ON s.id = r.step_id AND s.state = 'waiting'
  JOIN workflow w ON w.id = s.workflow_id AND w.status = 'active'
  JOIN attempt a ON a.step_id = s.id AND a.fencing_term = s.fencing_term
  -- By primary key whatever the statistics say: a custom plan hashed every attempt ever made.
  WHERE s.id = ANY(${ids})
),
${completionOf("settling")}`;

/** Settles waiting steps with receipts (waitingStepsSettled): ($1 steps, $2 results, $3 verification methods, $4 external references). */
export const settleWaitingSteps: NamedSql = {
  name: "fl_settle_waiting_steps",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::jsonb[], $3::verification_method[], $4::text[])
    AS r(step_id, observed_result, verification_method, external_reference)
),
${waitingStepsSettled("request", "$1::uuid[]")}
SELECT id AS receipt_id, step_id FROM written`,
};

/**
 * Fails waiting steps ($1 steps, $2 reasons): a wait whose outcome means the request cannot go
 * on (an event that did not come in time, where the step says a timeout fails it). The request
 * fails with the same reason, as when any step fails (recovery's endSteps): its other waiting
 * steps are cancelled, and it writes its `request.could_not_be_completed` outbox event.
 */
export const failWaitingSteps: NamedSql = {
  name: "fl_fail_waiting_steps",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::text[]) AS r(step_id, reason)
),
failed_steps AS (
  UPDATE step s
  SET state = 'failed', state_reason = r.reason, completed_at = now(), updated_at = now()
  FROM request r
  WHERE s.id = r.step_id AND s.state = 'waiting'
  RETURNING s.id, s.workflow_id, s.state_reason
),
failed AS (
  UPDATE workflow w
  SET status = 'failed', status_reason = f.state_reason, updated_at = now()
  FROM failed_steps f
  WHERE w.id = f.workflow_id AND w.status = 'active'
  RETURNING w.id
),
waits_cancelled AS (
  UPDATE step s
  SET state = 'cancelled', state_reason = 'request could not be completed', completed_at = now(), updated_at = now()
  FROM failed f
  -- The snapshot still shows the failing steps as waiting: leave them to failed_steps.
  WHERE s.workflow_id = f.id AND s.state = 'waiting' AND NOT EXISTS (SELECT 1 FROM failed_steps x WHERE x.id = s.id)
),
failed_event AS (
  INSERT INTO outbox_event (type, workflow_id) SELECT 'request.could_not_be_completed', id FROM failed
)
SELECT id AS step_id FROM failed_steps`,
};
