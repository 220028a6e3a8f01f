/**
 * The compensation room's named statements (docs/decisions/022-compensation.md). The room's
 * tables: `compensation_run` (one per request being undone) and `compensation` (one per step that
 * undoes another); its triggers (migration 20261208100001_compensation) start a run when a
 * request of a kind that undoes ends, and finish it when the last undo has its receipt.
 */
import type { NamedSql } from "@/lib/engine/db";

/**
 * Locks up to $2 runs ready to be planned (of requests $1, any when null): not planned yet, and no
 * step of the request in flight or under review, so every effect is known present (a receipt) or
 * absent (ended without one) before anything is undone.
 */
export const lockRunsToPlan: NamedSql = {
  name: "fl_compensation_lock_runs_to_plan",
  text: `
SELECT r.workflow_id, r.cause, w.kind, w.version, w.input_digest, w.priority, w.concurrency_key
FROM compensation_run r JOIN workflow w ON w.id = r.workflow_id
WHERE r.planned_at IS NULL AND w.status IN ('cancelling', 'failing')
  AND ($1::uuid[] IS NULL OR r.workflow_id = ANY($1::uuid[]))
  AND NOT EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = r.workflow_id AND s.state IN ('leased', 'indeterminate'))
ORDER BY r.started_at
LIMIT $2
FOR UPDATE OF r SKIP LOCKED`,
};

/**
 * The steps of requests $1 whose definition declares an undo, with what the run needs to decide:
 * state, receipt id (through receipt_step: the receipt itself is read by id, decision 021), and the
 * last person who settled its outcome in review.
 */
export const declaredSteps: NamedSql = {
  name: "fl_compensation_declared_steps",
  text: `
SELECT s.workflow_id, s.id AS step_id, s.name, s.state, s.position, s.fair_position, st->'compensate' AS compensate,
       rs.receipt_id,
       (SELECT c.resolved_by || ' (' || c.resolution || ')' FROM review_case c
        WHERE c.step_id = s.id AND c.status = 'resolved' ORDER BY c.resolved_at DESC LIMIT 1) AS reviewed_by
FROM workflow w
JOIN workflow_definition d ON d.kind = w.kind AND d.version = w.version
CROSS JOIN LATERAL jsonb_array_elements(d.steps) st
JOIN step s ON s.workflow_id = w.id AND s.name = st->>'name'
LEFT JOIN receipt_step rs ON rs.step_id = s.id
WHERE w.id = ANY($1::uuid[]) AND st ? 'compensate' AND s.undoes_step_id IS NULL`,
};

/** Receipts $1 by id: what an undo's plan records of them. */
export const receiptsById: NamedSql = {
  name: "fl_compensation_receipts_by_id",
  text: `
SELECT r.id, r.external_reference, r.verification_method, r.created_at
FROM receipt r WHERE r.id = ANY($1::uuid[])`,
};

/**
 * Writes the plan of runs: the undo steps ($1 id … $13 undoes), each depending on the step it undoes
 * (its receipt's result reaches the undo as that step's result) and on the undo before it ($14
 * step, $15 depends on: reverse order of receipts); their room records ($16 receipt, $17 external
 * reference, $18 rank, $19 decided by); then marks the runs ($20 workflows) planned with what was
 * not undone ($21), and counts the undos in their requests' remaining steps.
 */
export const writePlans: NamedSql = {
  name: "fl_compensation_write_plans",
  text: `
WITH planned AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[],
                       $9::int[], $10::int[], $11::smallint[], $12::bigint[], $13::uuid[],
                       $16::uuid[], $17::text[], $18::int[], $19::text[])
    AS p(id, workflow_id, name, position, adapter, adapter_version, step_class, input_digest, pending_dependencies,
         attempt_budget, priority, fair_position, undoes_step_id, receipt_id, external_reference, rank, decided_by)
),
steps AS (
  INSERT INTO step (id, workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest, state,
                    pending_dependencies, attempt_budget, priority, fair_position, concurrency_key, undoes_step_id)
  SELECT p.id, p.workflow_id, p.name, p.position, p.adapter, p.adapter_version, 'compensate', p.step_class, p.input_digest,
         CASE WHEN p.pending_dependencies = 0 THEN 'ready' ELSE 'blocked' END::step_state,
         p.pending_dependencies, p.attempt_budget, p.priority, p.fair_position, w.concurrency_key, p.undoes_step_id
  FROM planned p JOIN workflow w ON w.id = p.workflow_id
  RETURNING id
),
dependencies AS (
  INSERT INTO step_dependency (step_id, depends_on_step_id)
  SELECT d.step_id, d.depends_on_step_id FROM unnest($14::uuid[], $15::uuid[]) AS d(step_id, depends_on_step_id)
  WHERE d.step_id IN (SELECT id FROM steps)
),
records AS (
  INSERT INTO compensation (step_id, workflow_id, undoes_step_id, receipt_id, external_reference, rank, decided_by)
  SELECT p.id, p.workflow_id, p.undoes_step_id, p.receipt_id, p.external_reference, p.rank, p.decided_by
  FROM planned p WHERE p.id IN (SELECT id FROM steps)
),
runs AS (
  UPDATE compensation_run r SET planned_at = now(), not_undone = x.not_undone
  FROM unnest($20::uuid[], $21::jsonb[]) AS x(workflow_id, not_undone)
  WHERE r.workflow_id = x.workflow_id AND r.planned_at IS NULL
  RETURNING r.workflow_id
)
UPDATE workflow w
SET steps_remaining = w.steps_remaining + (SELECT count(*) FROM planned p WHERE p.workflow_id = w.id), updated_at = now()
FROM runs
WHERE w.id = runs.workflow_id
RETURNING w.id`,
};

/** Ends the runs of requests $1 whose undos all have receipts (nothing to undo included). */
export const finishRuns: NamedSql = {
  name: "fl_compensation_finish_runs",
  text: `SELECT fl_compensation_finish(id) FROM unnest($1::uuid[]) AS t(id)`,
};

/** What undo steps $1 undo: the step, the receipt that made the undo due, and who decided. */
export const undoesOf: NamedSql = {
  name: "fl_compensation_undoes_of",
  text: `
SELECT c.step_id, o.name AS undoes, o.id AS undoes_step_id, c.receipt_id, c.external_reference, c.decided_by, c.rank
FROM compensation c JOIN step o ON o.id = c.undoes_step_id
WHERE c.step_id = ANY($1::uuid[])`,
};

/** The undo step of each of steps $1, if one was planned. */
export const undoneBy: NamedSql = {
  name: "fl_compensation_undone_by",
  text: `
SELECT c.undoes_step_id, u.id AS step_id, u.name, u.state
FROM compensation c JOIN step u ON u.id = c.step_id
WHERE c.undoes_step_id = ANY($1::uuid[])`,
};

/** Whether any run waits for its plan and could be planned now: 0 when so, null otherwise. */
export const nextRunToPlan: NamedSql = {
  name: "fl_compensation_next_run_to_plan",
  text: `
SELECT 0 AS in_ms
FROM compensation_run r JOIN workflow w ON w.id = r.workflow_id
WHERE r.planned_at IS NULL AND w.status IN ('cancelling', 'failing')
  AND NOT EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = r.workflow_id AND s.state IN ('leased', 'indeterminate'))
LIMIT 1`,
};

/** The run and undos of requests $1, for the views, the cancel's answer and the webhooks. */
export const runsOf: NamedSql = {
  name: "fl_compensation_runs_of",
  text: `
SELECT r.workflow_id, r.cause, r.started_at, r.planned_at, r.finished_at, r.not_undone,
       coalesce((
         SELECT jsonb_agg(jsonb_build_object(
                  'stepId', u.id, 'name', u.name, 'undoes', o.name, 'undoesStepId', o.id, 'state', u.state,
                  'stateReason', u.state_reason, 'rank', c.rank, 'receiptId', c.receipt_id,
                  'externalReference', c.external_reference, 'decidedBy', c.decided_by) ORDER BY c.rank)
         FROM compensation c JOIN step u ON u.id = c.step_id JOIN step o ON o.id = c.undoes_step_id
         WHERE c.workflow_id = r.workflow_id), '[]'::jsonb) AS undos
FROM compensation_run r WHERE r.workflow_id = ANY($1::uuid[])`,
};
