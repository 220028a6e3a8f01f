import type { NamedSql } from "../db";

/**
 * Creates workflows with their steps and dependencies in one statement: workflows ($1 id … $10
 * deadline, or $11 ms from now on the database clock), steps ($12 id … $22 attempt budget) and
 * dependency edges ($23 step, $24 depends on).
 * A workflow whose requester already used its idempotency key is not inserted, nor are its steps; the
 * statement returns the inserted workflows' ids and the existing workflows it can see for the
 * keys given. One that a concurrent request committed after this statement began is in neither
 * set, and the caller reads it afterwards.
 */
export const createWorkflows: NamedSql = {
  name: "fl_create_workflows",
  text: `
WITH inserted AS (
  INSERT INTO workflow (id, kind, version, input, input_digest, requester, tracking_token, idempotency_key,
                        steps_remaining, deadline_at)
  SELECT r.id, r.kind, r.version, r.input, r.input_digest, r.requester, r.tracking_token, r.idempotency_key,
         r.steps_remaining, coalesce(r.deadline_at, now() + r.deadline_ms * interval '1 millisecond')
  FROM unnest($1::uuid[], $2::text[], $3::int[], $4::jsonb[], $5::text[], $6::text[], $7::text[], $8::text[],
              $9::int[], $10::timestamptz[], $11::int[])
    AS r(id, kind, version, input, input_digest, requester, tracking_token, idempotency_key, steps_remaining,
         deadline_at, deadline_ms)
  ON CONFLICT (requester, idempotency_key) DO NOTHING
  RETURNING id
),
steps AS (
  INSERT INTO step (id, workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest,
                    state, pending_dependencies, attempt_budget)
  SELECT r.id, r.workflow_id, r.name, r.position, r.adapter, r.adapter_version, r.operation, r.step_class, r.input_digest,
         CASE WHEN r.pending_dependencies = 0 THEN 'ready' ELSE 'blocked' END::step_state,
         r.pending_dependencies, r.attempt_budget
  FROM unnest($12::uuid[], $13::uuid[], $14::text[], $15::int[], $16::text[], $17::text[], $18::text[], $19::text[],
              $20::text[], $21::int[], $22::int[])
    AS r(id, workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest,
         pending_dependencies, attempt_budget)
  WHERE r.workflow_id IN (SELECT id FROM inserted)
  RETURNING id
),
dependencies AS (
  INSERT INTO step_dependency (step_id, depends_on_step_id)
  SELECT d.step_id, d.depends_on_step_id
  FROM unnest($23::uuid[], $24::uuid[]) AS d(step_id, depends_on_step_id)
  WHERE d.step_id IN (SELECT id FROM steps)
)
SELECT id, true AS created, NULL::text AS requester, NULL::text AS idempotency_key, NULL::text AS input_digest,
       NULL::text AS tracking_token, NULL::text AS kind, NULL::int AS version
FROM inserted
UNION ALL
SELECT w.id, false, w.requester, w.idempotency_key, w.input_digest, w.tracking_token, w.kind, w.version
FROM workflow w JOIN unnest($6::text[], $8::text[]) AS k(requester, idempotency_key)
  ON w.requester = k.requester AND w.idempotency_key = k.idempotency_key`,
};

/** Workflows by ($1 requester, $2 idempotency key) pairs. */
export const findWorkflowsByIdempotencyKey: NamedSql = {
  name: "fl_find_workflows_by_idempotency_key",
  text: `
SELECT w.id, w.requester, w.idempotency_key, w.input_digest, w.tracking_token, w.kind, w.version
FROM workflow w JOIN unnest($1::text[], $2::text[]) AS k(requester, idempotency_key)
  ON w.requester = k.requester AND w.idempotency_key = k.idempotency_key`,
};

/**
 * Cancels workflow $1 ($2 reason) if it is active. Updating the row locks it, so a concurrent
 * change to one of its steps that also locks the workflow (a review resolution) is ordered
 * before or after this, never beside it. A cancel writes the `request.cancelled` outbox event.
 */
export const cancelWorkflow: NamedSql = {
  name: "fl_cancel_workflow",
  text: `
WITH cancelled AS (
  UPDATE workflow
  SET status = 'cancelled', status_reason = $2, updated_at = now()
  WHERE id = $1 AND status = 'active'
  RETURNING id
),
cancelled_event AS (
  INSERT INTO outbox_event (type, workflow_id) SELECT 'request.cancelled', id FROM cancelled
)
SELECT id FROM cancelled`,
};

/**
 * Cancels the steps of cancelled workflow $1 that are not running ($2 reason): blocked, ready,
 * and waiting (a wait's room ends its own record with its step). A separate
 * statement from the cancel itself, run after it in the same transaction: its snapshot then
 * includes whatever a step became before the workflow row's lock was granted.
 */
export const cancelIdleSteps: NamedSql = {
  name: "fl_cancel_idle_steps",
  text: `
UPDATE step s
SET state = 'cancelled', state_reason = $2, completed_at = now(), updated_at = now()
FROM workflow w
WHERE w.id = $1 AND w.status = 'cancelled' AND s.workflow_id = w.id AND s.state IN ('blocked', 'ready', 'waiting')`,
};
