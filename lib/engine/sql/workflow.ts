import type { NamedSql } from "../db";

/**
 * Inserts workflows ($1 id … $9 deadline). A workflow whose idempotency key already exists is
 * not inserted; the caller reads the existing one instead.
 */
export const insertWorkflows: NamedSql = {
  name: "fl_insert_workflows",
  text: `
INSERT INTO workflow (id, kind, input, input_digest, requester, tracking_token, idempotency_key,
                      steps_remaining, deadline_at)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::int[], $9::timestamptz[])
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id`,
};

export const insertSteps: NamedSql = {
  name: "fl_insert_steps",
  text: `
INSERT INTO step (id, workflow_id, name, position, adapter, operation, step_class, input, input_digest,
                  state, pending_dependencies, attempt_budget)
SELECT id, workflow_id, name, position, adapter, operation, step_class, input, input_digest,
       CASE WHEN pending_dependencies = 0 THEN 'ready' ELSE 'blocked' END::step_state,
       pending_dependencies, attempt_budget
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::jsonb[],
            $9::text[], $10::int[], $11::int[])
  AS r(id, workflow_id, name, position, adapter, operation, step_class, input, input_digest,
       pending_dependencies, attempt_budget)`,
};

export const insertStepDependencies: NamedSql = {
  name: "fl_insert_step_dependencies",
  text: `
INSERT INTO step_dependency (step_id, depends_on_step_id)
SELECT * FROM unnest($1::uuid[], $2::uuid[])`,
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
