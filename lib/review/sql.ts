/**
 * The review queue's statements. Reads serve the queue and the case page's same-reference search
 * (the case itself is a Prisma read, case.ts); each resolution is one guarded transition whose
 * WHERE holds every condition: the case is open, its version is the one the person saw, and the
 * step is still indeterminate. The case row is the serialisation point:
 * two people resolving at once meet on it, and the second matches no row.
 */
import type { NamedSql } from "@/lib/engine/db";
import { contractColumn } from "@/lib/engine/sql/contract";

const MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/**
 * The queue: $1 status, $2 adapter, $3 reason text (a LIKE pattern, already escaped), $4 workflow
 * id prefix (from a customer reference), $5/$6 cursor (review_by, id), $7 limit, $8 only cases
 * held by this person, $9 only unassigned ones, $10 only overdue ones. By review-by time, so
 * overdue cases come first and a case never moves between pages as time passes.
 */
export const listReviewCases: NamedSql = {
  name: "fl_review_list",
  text: `
SELECT c.id, c.status, c.version, c.reason, c.opened_at, c.review_by, (c.status = 'open' AND c.review_by <= now()) AS overdue,
       c.assignee, c.assigned_at, c.workflow_id, c.resolution, c.resolved_by, c.resolved_at,
       to_char(c.review_by AT TIME ZONE 'UTC', ${MICROS}) AS review_key,
       s.id AS step_id, s.name AS step_name, s.adapter, s.adapter_version, s.operation,
       ${contractColumn("s.adapter", "s.adapter_version")} AS contract,
       (SELECT count(*)::int FROM attempt a WHERE a.step_id = s.id) AS attempt_count,
       (SELECT count(*)::int FROM late_observation o WHERE o.step_id = s.id) AS late_observation_count
FROM review_case c
JOIN step s ON s.id = c.step_id
WHERE c.status = $1::review_status
  AND ($2::text IS NULL OR s.adapter = $2)
  AND ($3::text IS NULL OR c.reason ILIKE $3)
  AND ($4::text IS NULL OR c.workflow_id::text LIKE $4 || '%')
  AND ($5::timestamptz IS NULL OR (c.review_by, c.id) > ($5::timestamptz, $6::uuid))
  AND ($8::text IS NULL OR c.assignee = $8)
  AND (NOT $9::boolean OR c.assignee IS NULL)
  AND (NOT $10::boolean OR (c.status = 'open' AND c.review_by <= now()))
ORDER BY c.review_by, c.id
LIMIT $7`,
};

/**
 * Other steps that carry one of the external references known for step $1 (from its attempts,
 * late observations, receipt and review cases), as a receipt or a confirmed review. Bounded.
 */
export const readSameReference: NamedSql = {
  name: "fl_review_read_same_reference",
  text: `
WITH refs AS (
  SELECT external_reference AS ref FROM attempt WHERE step_id = $1 AND external_reference IS NOT NULL
  UNION SELECT external_reference FROM late_observation WHERE step_id = $1 AND external_reference IS NOT NULL
  UNION SELECT external_reference FROM receipt WHERE step_id = $1 AND external_reference IS NOT NULL
  UNION SELECT external_reference FROM review_case WHERE step_id = $1 AND external_reference IS NOT NULL
),
hits AS (
  SELECT r.step_id, r.external_reference FROM receipt r JOIN refs ON refs.ref = r.external_reference
  UNION SELECT c.step_id, c.external_reference FROM review_case c JOIN refs ON refs.ref = c.external_reference
)
SELECT h.step_id, h.external_reference, s.name AS step_name, s.state, s.workflow_id
FROM hits h JOIN step s ON s.id = h.step_id
WHERE h.step_id <> $1
ORDER BY h.external_reference, h.step_id
LIMIT 20`,
};

const resolvedColumns = `c.id, c.step_id, c.resolution, c.resolved_by, c.resolved_at, c.version`;
const resolvedOutput = `id, step_id, resolution, resolved_by, resolved_at, version`;

/** The `request.review_resolved` outbox event of the case a resolution closed (CTE `resolved`). */
const resolvedEvent = `resolved_event AS (
  INSERT INTO outbox_event (type, workflow_id, detail)
  SELECT 'request.review_resolved', workflow_id, jsonb_build_object('reviewCaseId', id, 'resolution', resolution) FROM resolved
)`;

/**
 * Locks the request of case $1. Every resolution takes the request's row before the case's, the
 * order a cancel takes them in, so two resolutions of one case (or a resolution and a cancel)
 * queue one behind the other; in opposite orders they deadlocked.
 */
const lockRequestOfCase = `SELECT w.id, w.status FROM workflow w JOIN review_case rc ON rc.workflow_id = w.id WHERE rc.id = $1 FOR UPDATE OF w`;

/**
 * Confirm delivered, the guarded half: closes case $1 at version $2 for actor $3 ($4 note, $5
 * external reference) while its step is indeterminate, and names the step's latest attempt. The
 * caller completes the step with a manual-review receipt in the same transaction.
 */
export const resolveDelivered: NamedSql = {
  name: "fl_review_resolve_delivered",
  text: `
WITH request AS (${lockRequestOfCase}),
resolved AS (
  UPDATE review_case c
  SET status = 'resolved', resolution = 'confirm_delivered', resolved_by = $3, resolved_at = now(),
      resolution_note = $4, external_reference = $5, version = c.version + 1
  FROM step s, request r
  WHERE c.id = $1 AND c.status = 'open' AND c.version = $2
    AND r.id = c.workflow_id
    AND s.id = c.step_id AND s.state = 'indeterminate'
  RETURNING ${resolvedColumns}, c.workflow_id,
            (SELECT a.id FROM attempt a WHERE a.step_id = s.id ORDER BY a.fencing_term DESC LIMIT 1) AS attempt_id
),
${resolvedEvent}
SELECT ${resolvedOutput}, attempt_id FROM resolved`,
};

/**
 * Confirm not delivered: closes case $1 at version $2 for actor $3 ($4 note); makes the step ready
 * for a retry with the same request identity, with budget for at least one more attempt; and
 * records on every attempt whose call went unanswered that a person confirmed its effect absent,
 * so recovery no longer counts it as unknown. Only for an active request, or one being undone
 * (then a step of its own ends with nothing to undo, and only an undo is retried): a retry of an
 * ended one would never run.
 */
export const resolveNotDelivered: NamedSql = {
  name: "fl_review_resolve_not_delivered",
  text: `
WITH still_active AS (
  -- Locks the request's row and re-reads its status after any cancel that got there first;
  -- a cancel that comes after waits for this, then cancels the step made ready here.
  UPDATE workflow w SET updated_at = now()
  FROM review_case c
  WHERE c.id = $1 AND w.id = c.workflow_id AND w.status IN ('active', 'cancelling', 'failing')
  RETURNING w.id, w.status
),
resolved AS (
  UPDATE review_case c
  SET status = 'resolved', resolution = 'confirm_not_delivered', resolved_by = $3, resolved_at = now(),
      resolution_note = $4, version = c.version + 1
  FROM step s JOIN still_active w ON w.id = s.workflow_id
  WHERE c.id = $1 AND c.status = 'open' AND c.version = $2
    AND s.id = c.step_id AND s.state = 'indeterminate'
  RETURNING ${resolvedColumns}, c.workflow_id
),
${resolvedEvent},
-- A request being undone (lib/compensation) retries only an undo; a step of its own whose effect
-- a person found absent has nothing to undo, and ends.
ready AS (
  UPDATE step s
  SET state = CASE WHEN w.status = 'active' OR s.undoes_step_id IS NOT NULL THEN 'ready'::step_state ELSE 'cancelled'::step_state END,
      completed_at = CASE WHEN w.status = 'active' OR s.undoes_step_id IS NOT NULL THEN NULL ELSE now() END,
      next_mode = 'retry_same_identity', next_eligible_at = now(),
      attempt_budget = greatest(s.attempt_budget, s.attempts_started + 1),
      state_reason = 'review: confirmed not delivered by ' || $3, updated_at = now()
  FROM resolved r JOIN still_active w ON w.id = r.workflow_id
  WHERE s.id = r.step_id AND s.state = 'indeterminate'
),
absent AS (
  UPDATE attempt a
  SET observed_effect = 'absent',
      outcome_reason = coalesce(a.outcome_reason || '; ', '') || 'effect confirmed absent in review by ' || $3
  FROM resolved r
  WHERE a.step_id = r.step_id AND a.invocation_began_at IS NOT NULL AND a.observed_effect IS NULL
)
SELECT ${resolvedOutput} FROM resolved`,
};

/**
 * Abandon: closes case $1 at version $2 for actor $3 ($4 note); the step fails, the request's
 * steps that have not run are cancelled, and the request ends as failed with $5, the reason its
 * customer sees (an already ended request keeps its status and takes the reason).
 */
export const resolveAbandon: NamedSql = {
  name: "fl_review_resolve_abandon",
  text: `
WITH request AS (${lockRequestOfCase}),
resolved AS (
  UPDATE review_case c
  SET status = 'resolved', resolution = 'abandon', resolved_by = $3, resolved_at = now(),
      resolution_note = $4, version = c.version + 1
  FROM step s, request r
  WHERE c.id = $1 AND c.status = 'open' AND c.version = $2
    AND r.id = c.workflow_id
    AND s.id = c.step_id AND s.state = 'indeterminate'
  RETURNING ${resolvedColumns}, c.workflow_id
),
${resolvedEvent},
step_ended AS (
  UPDATE step s
  SET state = 'failed', state_reason = 'abandoned in review by ' || $3, completed_at = now(), updated_at = now()
  FROM resolved r
  WHERE s.id = r.step_id AND s.state = 'indeterminate'
),
rest_cancelled AS (
  UPDATE step s
  SET state = 'cancelled', state_reason = 'request abandoned in review', completed_at = now(), updated_at = now()
  FROM resolved r
  WHERE s.workflow_id = r.workflow_id AND s.id <> r.step_id AND s.state IN ('blocked', 'ready', 'waiting')
),
request_ended AS (
  UPDATE workflow w
  -- An abandoned undo ends its request as failed: never as cancelled, as if all were undone.
  -- An abandoned step of a request being undone is one effect left unknown and not undone: the
  -- undoing goes on with the others (lib/compensation).
  SET status = CASE WHEN w.status = 'active' OR (w.status IN ('cancelling', 'failing') AND s.undoes_step_id IS NOT NULL)
                    THEN 'failed'::workflow_status ELSE w.status END,
      status_reason = CASE WHEN w.status IN ('cancelling', 'failing') AND s.undoes_step_id IS NULL THEN w.status_reason ELSE $5 END,
      updated_at = now()
  FROM resolved r JOIN step s ON s.id = r.step_id
  WHERE w.id = r.workflow_id
),
-- The request's status as it was locked, before this statement: only an active one ends here.
ended_event AS (
  INSERT INTO outbox_event (type, workflow_id)
  SELECT 'request.could_not_be_completed', r.workflow_id FROM resolved r JOIN request q ON q.id = r.workflow_id WHERE q.status = 'active'
)
SELECT ${resolvedOutput} FROM resolved`,
};

/** Why a resolution of case $1 matched no row: the case, its step and its request as they are now. */
export const explainRefusal: NamedSql = {
  name: "fl_review_explain_refusal",
  text: `
SELECT c.status, c.version, c.resolution, c.resolved_by, c.resolved_at, c.external_reference, c.assignee, c.assigned_at,
       s.state AS step_state, w.status AS workflow_status
FROM review_case c JOIN step s ON s.id = c.step_id JOIN workflow w ON w.id = c.workflow_id
WHERE c.id = $1`,
};
