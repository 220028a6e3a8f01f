/** The request page's writes: each one guarded statement, its guard in the WHERE clause. */
import type { NamedSql } from "@/lib/engine/db";
import { contractColumn } from "@/lib/engine/sql/contract";
import { requestVersionOf } from "@/lib/engine/sql/workflow";

const DONE = `('completed', 'completed_without_effect')`;

/** Request $1's status and version as the primary has them now, with each step's state, to say what changed. */
export const readCurrentVersion: NamedSql = {
  name: "fl_page_current_version",
  text: `
SELECT w.status, ${requestVersionOf("w")} AS version_tag,
       (SELECT coalesce(json_agg(json_build_object('id', s.id, 'name', s.name, 'state', s.state, 'fencingTerm', s.fencing_term,
                                                   'attemptsStarted', s.attempts_started) ORDER BY s.position, s.id), '[]'::json)
        FROM step s WHERE s.workflow_id = w.id) AS steps
FROM workflow w WHERE w.id = $1`,
};

/**
 * Reruns failed request $1 from its step $2, when its version is still $3: a new budget of $4
 * attempts for that step and every step after it that has no receipt ($5 why, $6 who, $7 hours
 * to review). Guarded on the request being failed, unchanged since the operator looked, every
 * step before $2 receipted and nothing of it leased, waiting or under review. Receipted steps
 * after it keep their receipts and are not run again; earlier attempts stay as they were.
 *
 * Evidence decides each step, as recovery would: a step whose last attempt began its
 * invocation with no answer that the effect is absent has an unknown outcome. It runs again only
 * when its destination takes idempotency keys (same identity) or can be queried (status query
 * first); otherwise it goes to a review case, and a person settles it before anything runs.
 * Returns one row per step rearmed, with what it became.
 */
export const rerunFromStep: NamedSql = {
  name: "fl_page_rerun_from_step",
  text: `
WITH target AS (
  SELECT w.id AS workflow_id, f.position AS from_position
  FROM workflow w JOIN step f ON f.workflow_id = w.id AND f.id = $2
  WHERE w.id = $1 AND w.status = 'failed' AND ${requestVersionOf("w")} = $3
    AND f.state NOT IN ${DONE}
    AND NOT EXISTS (SELECT 1 FROM step b WHERE b.workflow_id = w.id AND b.position < f.position AND b.state NOT IN ${DONE})
    AND NOT EXISTS (SELECT 1 FROM step o WHERE o.workflow_id = w.id AND o.state IN ('leased', 'waiting', 'indeterminate'))
  FOR UPDATE OF w
),
evidence AS (
  SELECT s.id, s.workflow_id, s.request_identity,
         la.invocation_began_at IS NOT NULL AND la.observed_effect IS DISTINCT FROM 'absent' AS unknown,
         coalesce((${contractColumn("s.adapter", "s.adapter_version")}->>'idempotencyKeys')::boolean, false) AS idempotent,
         coalesce((${contractColumn("s.adapter", "s.adapter_version")}->>'statusQuery')::boolean, false) AS queryable,
         (SELECT count(*)::int FROM step_dependency d JOIN step p ON p.id = d.depends_on_step_id
          WHERE d.step_id = s.id AND p.state NOT IN ${DONE}) AS pending
  FROM step s
  JOIN target t ON t.workflow_id = s.workflow_id
  LEFT JOIN LATERAL (SELECT a.invocation_began_at, a.observed_effect FROM attempt a
                     WHERE a.step_id = s.id ORDER BY a.fencing_term DESC LIMIT 1) la ON true
  WHERE s.position >= t.from_position AND s.state NOT IN ${DONE}
),
plan AS (
  SELECT e.*,
         CASE WHEN e.unknown AND NOT e.idempotent AND NOT e.queryable THEN 'indeterminate'
              WHEN e.pending > 0 THEN 'blocked' ELSE 'ready' END AS next_state,
         CASE WHEN e.unknown AND e.idempotent THEN 'retry_same_identity'
              WHEN e.unknown AND e.queryable THEN 'status_query'
              WHEN e.request_identity IS NOT NULL THEN 'retry_same_identity' ELSE 'execute' END AS next_mode
  FROM evidence e
),
revived AS (
  UPDATE workflow w SET status = 'active', status_reason = NULL, updated_at = now()
  FROM target t WHERE w.id = t.workflow_id
  RETURNING w.id
),
rearmed AS (
  UPDATE step s
  SET state = p.next_state::step_state, pending_dependencies = p.pending,
      attempt_budget = s.attempts_started + $4, next_mode = p.next_mode::attempt_mode,
      next_eligible_at = now(), completed_at = NULL, updated_at = now(),
      state_reason = CASE WHEN p.next_state = 'indeterminate'
                          THEN 'rerun asked: the last attempt''s outcome is unknown, review first' ELSE $5 END
  FROM plan p
  WHERE s.id = p.id AND EXISTS (SELECT 1 FROM revived)
  RETURNING s.id, s.workflow_id, s.name, s.state, s.next_mode
),
reviews AS (
  INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by)
  SELECT r.id, r.workflow_id, 'outcome unknown: a rerun was asked, and its last attempt began an invocation at a destination that neither takes idempotency keys nor can be queried',
         jsonb_build_object('trigger', 'rerun', 'rerunBy', $6::text, 'reason', $5::text), now() + $7::int * interval '1 hour'
  FROM rearmed r WHERE r.state = 'indeterminate'
)
SELECT id, name, state, next_mode FROM rearmed`,
};

/** The latest rerun of request $1 made from its version $2 and step $3, as its audit entry recorded it. */
export const readEarlierRerun: NamedSql = {
  name: "fl_page_earlier_rerun",
  text: `
SELECT after FROM audit_log
WHERE action = 'request.rerun' AND subject_type = 'request' AND subject_id = $1
  AND after->>'seenVersion' = $2 AND after->>'fromStepId' = $3
ORDER BY id DESC LIMIT 1`,
};
