import type { NamedSql } from "../db";

/**
 * Creates workflows with their steps and dependencies in one statement: workflows ($1 id … $9
 * deadline), steps ($10 id … $20 attempt budget) and dependency edges ($21 step, $22 depends on).
 * A workflow whose idempotency key already exists is not inserted, nor are its steps; the
 * statement returns the inserted workflows' ids and the existing workflows it can see for the
 * keys given. One that a concurrent request committed after this statement began is in neither
 * set, and the caller reads it afterwards.
 */
export const createWorkflows: NamedSql = {
  name: "fl_create_workflows",
  text: `
WITH inserted AS (
  INSERT INTO workflow (id, kind, input, input_digest, requester, tracking_token, idempotency_key,
                        steps_remaining, deadline_at)
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::int[], $9::timestamptz[])
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING id
),
steps AS (
  INSERT INTO step (id, workflow_id, name, position, adapter, operation, step_class, input, input_digest,
                    state, pending_dependencies, attempt_budget)
  SELECT r.id, r.workflow_id, r.name, r.position, r.adapter, r.operation, r.step_class, r.input, r.input_digest,
         CASE WHEN r.pending_dependencies = 0 THEN 'ready' ELSE 'blocked' END::step_state,
         r.pending_dependencies, r.attempt_budget
  FROM unnest($10::uuid[], $11::uuid[], $12::text[], $13::int[], $14::text[], $15::text[], $16::text[], $17::jsonb[],
              $18::text[], $19::int[], $20::int[])
    AS r(id, workflow_id, name, position, adapter, operation, step_class, input, input_digest,
         pending_dependencies, attempt_budget)
  WHERE r.workflow_id IN (SELECT id FROM inserted)
  RETURNING id
),
dependencies AS (
  INSERT INTO step_dependency (step_id, depends_on_step_id)
  SELECT d.step_id, d.depends_on_step_id
  FROM unnest($21::uuid[], $22::uuid[]) AS d(step_id, depends_on_step_id)
  WHERE d.step_id IN (SELECT id FROM steps)
)
SELECT id, true AS created, NULL::text AS idempotency_key, NULL::text AS input_digest, NULL::text AS tracking_token, NULL::text AS kind
FROM inserted
UNION ALL
SELECT id, false, idempotency_key, input_digest, tracking_token, kind
FROM workflow WHERE idempotency_key = ANY($7::text[])`,
};

export const findWorkflowsByIdempotencyKey: NamedSql = {
  name: "fl_find_workflows_by_idempotency_key",
  text: `
SELECT id, idempotency_key, input_digest, tracking_token, kind
FROM workflow WHERE idempotency_key = ANY($1::text[])`,
};

/**
 * Cancels workflow $1 ($2 reason) if it is active. Updating the row locks it, so a concurrent
 * change to one of its steps that also locks the workflow (a review resolution) is ordered
 * before or after this, never beside it.
 */
export const cancelWorkflow: NamedSql = {
  name: "fl_cancel_workflow",
  text: `
UPDATE workflow
SET status = 'cancelled', status_reason = $2, updated_at = now()
WHERE id = $1 AND status = 'active'
RETURNING id`,
};

/**
 * Cancels the steps of cancelled workflow $1 that are not running ($2 reason). A separate
 * statement from the cancel itself, run after it in the same transaction: its snapshot then
 * includes whatever a step became before the workflow row's lock was granted.
 */
export const cancelIdleSteps: NamedSql = {
  name: "fl_cancel_idle_steps",
  text: `
UPDATE step s
SET state = 'cancelled', state_reason = $2, completed_at = now(), updated_at = now()
FROM workflow w
WHERE w.id = $1 AND w.status = 'cancelled' AND s.workflow_id = w.id AND s.state IN ('blocked', 'ready')`,
};
