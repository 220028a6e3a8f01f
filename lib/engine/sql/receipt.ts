import type { NamedSql } from "../db";
import { holdsAuthority } from "./authority";

/**
 * The fenced half of a batch of receipts from session $1: for each ($2 step, $3 term, $4 outcome,
 * $5 outcome reason, $6 external reference, $7 result) whose lease still holds authority
 * (./authority.ts), ends the lease and concludes the attempt, in the one row that carries both.
 * Each row is fenced on its own; rows that lose authority simply do not come back.
 */
export const concludeAttempts: NamedSql = {
  name: "fl_conclude_attempts",
  text: `
WITH request AS (
  SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::attempt_outcome[], $5::text[], $6::text[], $7::jsonb[])
    AS r(step_id, fencing_term, outcome, outcome_reason, external_reference, observed_result)
),
concluded AS (
  -- The attempt's end is its lease's 'released' event.
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'receipt',
      checkpoint = 'receipt_committed', outcome = r.outcome, outcome_reason = r.outcome_reason,
      external_reference = coalesce(r.external_reference, l.external_reference),
      observed_result = coalesce(r.observed_result, l.observed_result)
  FROM request r
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "r.step_id", term: "r.fencing_term" })}
  RETURNING l.id, l.step_id, l.outcome
)
SELECT c.id AS attempt_id, c.step_id, c.outcome FROM concluded c`,
};

/**
 * Writes receipts and completes their steps: ($1 attempt, $2 verification method, $3 step state,
 * $4 external reference, $5 result). The receipt copies the attempt's identity, digest and term;
 * explicit reference and result override what the attempt recorded (reconciliation from a late
 * observation, or a person's confirmation). In the same statement it releases dependants whose
 * last dependency this was and completes workflows whose last step this was, writing each such
 * workflow's `request.completed` outbox event. Callers hold the
 * step's authority: a fenced lease (workers), a locked expired lease (recovery), or a review
 * case version (support).
 */
export const completeSteps: NamedSql = {
  name: "fl_complete_steps",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::verification_method[], $3::step_state[], $4::text[], $5::jsonb[])
    AS r(attempt_id, verification_method, step_state, external_reference, observed_result)
),
written AS (
  INSERT INTO receipt (workflow_id, step_id, attempt_id, input_digest, adapter_version, request_identity,
                       external_reference, observed_result, verification_method, fencing_term, epoch)
  SELECT a.workflow_id, a.step_id, a.id, a.input_digest, a.adapter_version, a.request_identity,
         coalesce(r.external_reference, a.external_reference), coalesce(r.observed_result, a.observed_result),
         r.verification_method, a.fencing_term, a.epoch
  FROM request r JOIN attempt a ON a.id = r.attempt_id
  -- By primary key whatever the statistics say: planned while the table was small, the generic
  -- plan hashed a scan of every attempt, a cost that grew with the table.
  WHERE a.id = ANY($1::uuid[])
  RETURNING id, step_id, workflow_id, attempt_id
),
-- One receipt per step: a second fails here on the primary key "receipt_one_per_step" (receipts
-- are partitioned by id, so receipt(step_id) cannot be unique itself).
-- The step's update reads it, so it runs before anything else this statement changes.
one_per_step AS (
  INSERT INTO receipt_step (step_id, receipt_id) SELECT step_id, id FROM written
  RETURNING step_id
),
step_done AS (
  UPDATE step s
  SET state = r.step_state, completed_at = now(), updated_at = now(), state_reason = NULL
  FROM written w JOIN request r ON r.attempt_id = w.attempt_id JOIN one_per_step g ON g.step_id = w.step_id
  WHERE s.id = w.step_id
  RETURNING s.id, s.workflow_id
),
dependants_released AS (
  UPDATE step d
  SET pending_dependencies = d.pending_dependencies - x.n,
      state = CASE WHEN d.state = 'blocked' AND d.pending_dependencies = x.n THEN 'ready'::step_state ELSE d.state END,
      next_eligible_at = now(),
      updated_at = now()
  FROM (
    SELECT dep.step_id, count(*)::int AS n
    FROM step_dependency dep JOIN step_done sd ON sd.id = dep.depends_on_step_id
    GROUP BY dep.step_id
  ) x
  WHERE d.id = x.step_id
),
workflow_progress AS (
  UPDATE workflow w
  SET steps_remaining = w.steps_remaining - x.n,
      status = CASE WHEN w.steps_remaining = x.n AND w.status = 'active' THEN 'completed'::workflow_status ELSE w.status END,
      updated_at = now()
  FROM (SELECT workflow_id, count(*)::int AS n FROM step_done GROUP BY workflow_id) x
  WHERE w.id = x.workflow_id
  RETURNING w.id, w.status, w.steps_remaining
),
-- Only this statement can take a workflow's last step: completed with none remaining is new here.
completed_event AS (
  INSERT INTO outbox_event (type, workflow_id)
  SELECT 'request.completed', id FROM workflow_progress WHERE status = 'completed' AND steps_remaining = 0
)
SELECT id AS receipt_id, step_id FROM written`,
};
