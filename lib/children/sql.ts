/* The children room's named statements (migration 20261208200100_child_requests). */
import type { NamedSql } from "@/lib/engine/db";

/** The parent request of parked step $1, whose row the parking transaction holds: what its children inherit. */
export const parentOfParkedStep: NamedSql = {
  name: "fl_children_parent_of_parked_step",
  text: `SELECT w.requester, w.priority, w.concurrency_key FROM workflow w WHERE w.id = $1`,
};

/** Records the wait of parent step $1 (request $2): $3 what a failed child means, $4 how many children. */
export const armChildWait: NamedSql = {
  name: "fl_arm_child_wait",
  text: `
INSERT INTO child_wait (step_id, workflow_id, on_child_failure, children_total)
VALUES ($1, $2, $3, $4)
RETURNING armed_at`,
};

/**
 * Links parent step $1 (request $2) to its children $3, in list order: the child at position i
 * has index i - 1. The primary key (parent step, index) is what makes each child start at most once.
 */
export const linkChildren: NamedSql = {
  name: "fl_link_children",
  text: `
INSERT INTO child_request (parent_step_id, index, parent_workflow_id, child_workflow_id)
SELECT $1, c.ord - 1, $2, c.id FROM unnest($3::uuid[]) WITH ORDINALITY AS c(id, ord)
RETURNING index`,
};

/**
 * Takes up to $1 child waits the keepers have something to do for (every child ended, or one
 * failed under \`fail\`), earliest first, with their parent requests' rows, skipping what another
 * keeper or a cancel holds; moves each out of \`waiting\`: \`failed\` when a child failed and the
 * step said that fails it, \`ended\` otherwise.
 */
export const takeDueChildWaits: NamedSql = {
  name: "fl_take_due_child_waits",
  text: `
WITH due AS (
  SELECT c.step_id FROM child_wait c JOIN workflow w ON w.id = c.workflow_id
  WHERE c.state = 'waiting' AND c.due_at <= now()
  ORDER BY c.due_at
  LIMIT $1
  FOR UPDATE OF c, w SKIP LOCKED
)
UPDATE child_wait c
SET state = CASE WHEN c.children_failed > 0 AND c.on_child_failure = 'fail' THEN 'failed' ELSE 'ended' END::child_wait_state,
    settled_at = now()
WHERE c.step_id = ANY(ARRAY(SELECT step_id FROM due)) AND c.state = 'waiting'
RETURNING c.step_id, c.state::text, c.children_total`,
};

/**
 * The children of parent steps $1 in list order: how each request ended, why (its reason and the
 * last failure of its failed step), and its steps'
 * results by name (the \`observed_result\` of their receipts; a step without one reads null).
 */
export const childOutcomes: NamedSql = {
  name: "fl_child_outcomes",
  text: `
SELECT c.parent_step_id, c.index, w.id AS request_id, w.kind, w.version, w.status::text,
       -- Why it ended, with the last failure of its failed step when it has one.
       concat_ws(': ', w.status_reason,
                 (SELECT a.outcome_reason FROM step s JOIN attempt a ON a.step_id = s.id
                   WHERE s.workflow_id = w.id AND s.state = 'failed' AND a.outcome_reason IS NOT NULL
                   ORDER BY a.ended_at DESC NULLS LAST LIMIT 1)) AS status_reason,
       (SELECT coalesce(jsonb_object_agg(s.name, r.observed_result), '{}'::jsonb)
          FROM step s LEFT JOIN receipt r ON r.step_id = s.id WHERE s.workflow_id = w.id) AS results
FROM child_request c JOIN workflow w ON w.id = c.child_workflow_id
WHERE c.parent_step_id = ANY($1::uuid[])
ORDER BY c.parent_step_id, c.index`,
};

/** Milliseconds until the earliest child wait with something to do; null when none has. */
export const nextChildWaitDue: NamedSql = {
  name: "fl_next_child_wait_due",
  text: `SELECT (extract(epoch FROM (min(due_at) - now())) * 1000)::float8 AS in_ms FROM child_wait WHERE state = 'waiting' AND due_at IS NOT NULL`,
};
