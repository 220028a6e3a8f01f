import type { NamedSql } from "../db";
import { holdsAuthority, permitsStep } from "./authority";

/**
 * What every completion does after it knows its concluded attempts: the CTEs that write the
 * receipts, complete the steps, release dependants whose last dependency this was and complete
 * workflows whose last step this was, writing each such workflow's `request.completed` outbox
 * event. `source` names a CTE of (attempt_id, step_id, workflow_id, input_digest, adapter_version,
 * request_identity, external_reference, observed_result, verification_method, step_state,
 * fencing_term, epoch), one row per receipt; the CTE `written` holds the receipts.
 */
export const completionOf = (source: string): string => `
written AS (
  INSERT INTO receipt (workflow_id, step_id, attempt_id, input_digest, adapter_version, request_identity,
                       external_reference, observed_result, verification_method, fencing_term, epoch)
  SELECT workflow_id, step_id, attempt_id, input_digest, adapter_version, request_identity,
         external_reference, observed_result, verification_method, fencing_term, epoch
  FROM ${source}
  RETURNING id, step_id, workflow_id, attempt_id
),
-- One receipt per step: a second fails here on the primary key "receipt_one_per_step" (receipts
-- are partitioned by id, so receipt(step_id) cannot be unique itself).
-- The step's update reads it, so it runs before anything else this statement changes.
one_per_step AS (
  INSERT INTO receipt_step (step_id, receipt_id) SELECT step_id, id FROM written
  RETURNING step_id
),
-- Every row of the source has its receipt (or the statement fails), so the source drives the
-- update and each step is found by its primary key. The receipts are only checked against, as
-- one array: a join of these lists, which are estimated at one row each, was planned as nested
-- loops over them (500 × 500 rows, a second for a keeper's pass of 500 timers).
step_done AS (
  UPDATE step s
  SET state = c.step_state, completed_at = now(), updated_at = now(), state_reason = NULL
  FROM ${source} c
  WHERE s.id = c.step_id AND c.step_id = ANY(ARRAY(SELECT step_id FROM one_per_step))
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
-- Only a completion can take a workflow's last step: completed with none remaining is new here.
completed_event AS (
  INSERT INTO outbox_event (type, workflow_id)
  SELECT 'request.completed', id FROM workflow_progress WHERE status = 'completed' AND steps_remaining = 0
)`;

/**
 * A batch of receipts from session $1, in one statement: for each ($2 step, $3 term, $4 outcome,
 * $5 outcome reason, $6 external reference, $7 result, $8 verification method, $9 step state)
 * whose lease still holds authority (./authority.ts), ends the lease and concludes the attempt,
 * in the one row that carries both, and completes the step from what the concluded row now holds
 * (`completionOf`). Each row is fenced on its own; rows that lose authority simply do not come
 * back. One statement is one transaction without BEGIN and COMMIT: the conclusion and the
 * completion commit together or not at all.
 */
export const commitReceipts: NamedSql = {
  name: "fl_commit_receipts",
  text: `
WITH request AS (
  SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::attempt_outcome[], $5::text[], $6::text[], $7::jsonb[],
                       $8::verification_method[], $9::step_state[])
    AS r(step_id, fencing_term, outcome, outcome_reason, external_reference, observed_result, verification_method,
         step_state)
),
-- A receipt and a cancel of its request serialize on the request's row. The authority guard
-- reads the workflow as this statement's snapshot has it; a cancel that committed while this
-- statement waited for the row would otherwise be missed, leaving a completed step on a
-- cancelled request, which no order of the two explains. Locking rechecks the row as committed.
-- In the order of ids, as every batch locks them, so two batches cannot deadlock here.
governing AS (
  SELECT r.step_id
  FROM request r JOIN step s ON s.id = r.step_id JOIN workflow w ON w.id = s.workflow_id
  WHERE ${permitsStep("w", "s.id")}
  ORDER BY w.id
  FOR NO KEY UPDATE OF w
),
concluded AS (
  -- The attempt's end is its lease's 'released' event. RETURNING gives the row as updated: the
  -- receipt copies the reference and result just concluded.
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'receipt',
      checkpoint = 'receipt_committed', outcome = r.outcome, outcome_reason = r.outcome_reason,
      external_reference = coalesce(r.external_reference, l.external_reference),
      observed_result = coalesce(r.observed_result, l.observed_result)
  FROM request r
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "r.step_id", term: "r.fencing_term" })}
    AND r.step_id IN (SELECT step_id FROM governing)
  RETURNING l.id AS attempt_id, l.step_id, l.workflow_id, l.input_digest, l.adapter_version, l.request_identity,
            l.external_reference, l.observed_result, r.verification_method, r.step_state, l.fencing_term, l.epoch
),
${completionOf("concluded")}
SELECT id AS receipt_id, step_id FROM written`,
};

/**
 * Writes receipts and completes their steps: ($1 attempt, $2 verification method, $3 step state,
 * $4 external reference, $5 result). The receipt copies the attempt's identity, digest and term;
 * explicit reference and result override what the attempt recorded (reconciliation from a late
 * observation, or a person's confirmation). Callers hold the step's authority: a locked expired
 * lease (recovery), or a review case version (support); a worker's receipts go through
 * `commitReceipts`.
 */
export const completeSteps: NamedSql = {
  name: "fl_complete_steps",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::verification_method[], $3::step_state[], $4::text[], $5::jsonb[])
    AS r(attempt_id, verification_method, step_state, external_reference, observed_result)
),
completing AS (
  SELECT a.id AS attempt_id, a.step_id, a.workflow_id, a.input_digest, a.adapter_version, a.request_identity,
         coalesce(r.external_reference, a.external_reference) AS external_reference,
         coalesce(r.observed_result, a.observed_result) AS observed_result,
         r.verification_method, r.step_state, a.fencing_term, a.epoch
  FROM request r JOIN attempt a ON a.id = r.attempt_id
  -- By primary key whatever the statistics say: planned while the table was small, the generic
  -- plan hashed a scan of every attempt, a cost that grew with the table.
  WHERE a.id = ANY($1::uuid[])
),
${completionOf("completing")}
SELECT id AS receipt_id, step_id FROM written`,
};
