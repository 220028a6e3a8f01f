import type { NamedSql } from "../db";

/**
 * Creates workflows with their steps and dependencies in one statement: workflows ($1 id … $10
 * deadline, or $11 ms from now on the database clock, $25 priority, $26 concurrency key, $27 W3C traceparent), steps
 * ($12 id … $22 attempt budget) and dependency edges ($23 step, $24 depends on).
 * A workflow whose requester already used its idempotency key is not inserted, nor are its steps; the
 * statement returns the inserted workflows' ids and the existing workflows it can see for the
 * keys given. One that a concurrent request committed after this statement began is in neither
 * set, and the caller reads it afterwards.
 *
 * Each request takes its fair-share position (migration 20261207100000_fair_share): a request
 * with a concurrency key of a round-robin kind takes max(V, its key's last position) + its rank
 * among this statement's requests of that key, V being where its priority's round robin stands
 * (the lowest position of a claimable ready step; with none, the furthest any key has reached);
 * any other request takes V + 1. Its steps carry its priority, position and key.
 */
export const createWorkflows: NamedSql = {
  name: "fl_create_workflows",
  text: `
WITH request AS (
  SELECT *
  FROM unnest($1::uuid[], $2::text[], $3::int[], $4::jsonb[], $5::text[], $6::text[], $7::text[], $8::text[],
              $9::int[], $10::timestamptz[], $11::int[], $25::smallint[], $26::text[], $27::text[]) WITH ORDINALITY
    AS r(id, kind, version, input, input_digest, requester, tracking_token, idempotency_key, steps_remaining,
         deadline_at, deadline_ms, priority, concurrency_key, trace_parent, ord)
),
head AS (
  SELECT p.priority,
         coalesce((SELECT s.fair_position FROM step s
                   WHERE s.state = 'ready' AND s.next_eligible_at < 'infinity' AND s.priority = p.priority
                   ORDER BY s.priority DESC, s.fair_position LIMIT 1),
                  (SELECT max(k.last_position) FROM concurrency_key k), 0) AS v
  FROM (SELECT DISTINCT priority FROM request) p
),
keyed AS (
  SELECT r.ord, r.kind, r.concurrency_key AS key, h.v,
         row_number() OVER (PARTITION BY r.kind, r.concurrency_key ORDER BY r.ord) AS rank,
         count(*) OVER (PARTITION BY r.kind, r.concurrency_key) AS n
  FROM request r JOIN head h ON h.priority = r.priority
  WHERE r.concurrency_key IS NOT NULL AND (SELECT f.fairness FROM fl_fair_share(r.kind) f) = 'round-robin'
),
key_turn AS (
  -- Each key's row is locked until commit, in (kind, key) order: creations of one key take their
  -- positions one after another, and two creations never wait on each other in a cycle.
  INSERT INTO concurrency_key AS k (kind, key, last_position, requests)
  SELECT kind, key, max(v) + max(n), max(n) FROM keyed GROUP BY kind, key ORDER BY kind, key
  ON CONFLICT (kind, key) DO UPDATE
  SET last_position = greatest(k.last_position + excluded.requests, excluded.last_position),
      requests = k.requests + excluded.requests,
      last_request_at = now()
  RETURNING k.kind, k.key, k.last_position
),
positioned AS (
  SELECT r.*, coalesce(t.last_position - kd.n + kd.rank, h.v + 1) AS fair_position
  FROM request r
  JOIN head h ON h.priority = r.priority
  LEFT JOIN keyed kd ON kd.ord = r.ord
  LEFT JOIN key_turn t ON t.kind = kd.kind AND t.key = kd.key
),
inserted AS (
  INSERT INTO workflow (id, kind, version, input, input_digest, requester, tracking_token, idempotency_key,
                        steps_remaining, deadline_at, priority, concurrency_key, trace_parent)
  SELECT r.id, r.kind, r.version, r.input, r.input_digest, r.requester, r.tracking_token, r.idempotency_key,
         r.steps_remaining, coalesce(r.deadline_at, now() + r.deadline_ms * interval '1 millisecond'), r.priority, r.concurrency_key,
         r.trace_parent
  FROM positioned r
  ON CONFLICT (requester, idempotency_key) DO NOTHING
  RETURNING id
),
steps AS (
  INSERT INTO step (id, workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest,
                    state, pending_dependencies, attempt_budget, priority, fair_position, concurrency_key)
  SELECT r.id, r.workflow_id, r.name, r.position, r.adapter, r.adapter_version, r.operation, r.step_class, r.input_digest,
         CASE WHEN r.pending_dependencies = 0 THEN 'ready' ELSE 'blocked' END::step_state,
         r.pending_dependencies, r.attempt_budget, w.priority, w.fair_position, w.concurrency_key
  FROM unnest($12::uuid[], $13::uuid[], $14::text[], $15::int[], $16::text[], $17::text[], $18::text[], $19::text[],
              $20::text[], $21::int[], $22::int[])
    AS r(id, workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest,
         pending_dependencies, attempt_budget)
  JOIN positioned w ON w.id = r.workflow_id
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
 * The version of request `w` an operator acts on: a digest of its status and of each step's
 * state, fencing term, attempts started and budget. Any change an action could be refused for
 * changes it; a renewal or a checkpoint does not. The request page's read and every guard of its
 * actions share it (lib/requests/page).
 */
export const requestVersionOf = (w: string): string => `md5(${w}.status::text || '|' || coalesce((
  SELECT string_agg(vs.id::text || ':' || vs.state::text || ':' || vs.fencing_term || ':' || vs.attempts_started || ':' || vs.attempt_budget, ','
                    ORDER BY vs.position, vs.id)
  FROM step vs WHERE vs.workflow_id = ${w}.id), ''))`;

/**
 * Locks workflow $1's row before a cancel decides on its version. A statement reads the steps of
 * the snapshot it started with, even after waiting for the row's lock; taken first, the lock
 * makes the guarded cancel start after whatever held it (a step parking, a review resolution)
 * committed, so the version it compares is the request's as it is.
 */
export const lockWorkflow: NamedSql = {
  name: "fl_lock_workflow",
  text: `SELECT w.id FROM workflow w WHERE w.id = $1 FOR UPDATE`,
};

/**
 * Cancels workflow $1 ($2 reason) if it is active and, when $3 is not null, its version
 * (requestVersionOf) is still $3: an operator's cancel applies to the request they saw, never to
 * one that moved since. Updating the row locks it, so a concurrent change to one of its steps that
 * also locks the workflow (a review resolution) is ordered before or after this, never beside it.
 * A cancel writes the `request.cancelled` outbox event.
 */
export const cancelWorkflow: NamedSql = {
  name: "fl_cancel_workflow",
  text: `
WITH cancelled AS (
  UPDATE workflow w
  SET status = 'cancelled', status_reason = $2, updated_at = now()
  WHERE w.id = $1 AND w.status = 'active' AND ($3::text IS NULL OR ${requestVersionOf("w")} = $3)
  -- A kind that undoes on cancel becomes 'cancelling' instead (trigger compensation_starts).
  RETURNING id, status
),
cancelled_event AS (
  INSERT INTO outbox_event (type, workflow_id) SELECT 'request.cancelled', id FROM cancelled
)
SELECT id, status FROM cancelled`,
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
WHERE w.id = $1 AND w.status IN ('cancelled', 'cancelling') AND s.workflow_id = w.id AND s.state IN ('blocked', 'ready', 'waiting')
  AND s.undoes_step_id IS NULL`,
};
