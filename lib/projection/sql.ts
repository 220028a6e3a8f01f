/**
 * What the end-user projection reads: one workflow with its steps, in one statement. A step is
 * "interrupted" when an earlier try ended without a conclusion (authority lost or failed), and
 * "under review" while a review case is open. A reason is customer-facing only when support
 * wrote it while abandoning the request. The words come from the request's registered workflow
 * version; a step calls something outside Fenceline unless its adapter's registered contract
 * says otherwise.
 *
 * A step that may run is "longer than usual" when it has waited to settle (since its last
 * dependency concluded, or since the request was made) longer than the floor and longer than
 * the 90th percentile of the same step of the same kind over the last day. The percentile is
 * read only past the floor, from a bounded sample of the newest settled steps, so a request
 * that is on time costs nothing more; with too few of them nothing is "usual" and nothing is said.
 */
import type { NamedSql } from "@/lib/engine/db";

/** What "longer than usual" compares against (see the header). */
export const LONGER_THAN_USUAL = {
  percentile: 0.9,
  floorSeconds: 60,
  windowHours: 24,
  minSamples: 10,
  maxSamples: 500,
} as const;

/** When step `alias` could start: its last dependency's conclusion, or its request's creation (`request`). */
const eligibleSince = (alias: string, request: string) => `coalesce(
  (SELECT max(dep.completed_at) FROM step_dependency sd JOIN step dep ON dep.id = sd.depends_on_step_id WHERE sd.step_id = ${alias}.id),
  ${request}.created_at)`;

const { percentile, floorSeconds, windowHours, minSamples, maxSamples } = LONGER_THAN_USUAL;
const longerThanUsual = `
  s.state IN ('ready', 'leased') AND w.status = 'active' AND now() - since.at > interval '${floorSeconds} seconds' AND (
    SELECT count(*) >= ${minSamples} AND now() - since.at > percentile_cont(${percentile}) WITHIN GROUP (ORDER BY usual.settled)
    FROM (
      SELECT h.completed_at - ${eligibleSince("h", "hw")} AS settled
      FROM step h JOIN workflow hw ON hw.id = h.workflow_id
      WHERE h.name = s.name AND h.state IN ('completed', 'completed_without_effect')
        AND h.completed_at > now() - interval '${windowHours} hours' AND hw.kind = w.kind
      ORDER BY h.completed_at DESC
      LIMIT ${maxSamples}
    ) usual
  )`;

const snapshotOf = (where: string) => `
SELECT w.id, w.kind, w.version, w.input, w.status, w.created_at, w.updated_at,
       d.title AS definition_title, d.steps AS definition_steps,
       (w.deadline_at IS NOT NULL AND w.deadline_at <= now()) AS deadline_passed,
       CASE WHEN EXISTS (
         SELECT 1 FROM review_case c WHERE c.workflow_id = w.id AND c.status = 'resolved' AND c.resolution = 'abandon'
       ) THEN w.status_reason END AS customer_reason,
       (
         SELECT coalesce(json_agg(json_build_object(
                  'name', s.name, 'position', s.position, 'state', s.state,
                  'externalEffect', coalesce((SELECT ad.external_effect FROM adapter_definition ad
                                              WHERE ad.name = s.adapter AND ad.version = s.adapter_version), true),
                  'attemptsStarted', s.attempts_started,
                  'interrupted', EXISTS (SELECT 1 FROM attempt a WHERE a.step_id = s.id AND a.outcome IN ('lease_lost', 'failed')),
                  'underReview', EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open'),
                  'longerThanUsual', coalesce(${longerThanUsual}, false),
                  'wait', CASE WHEN s.state = 'waiting' THEN coalesce(
                    (SELECT json_build_object('room', 'timer', 'dueAt', t.due_at, 'timeZone', t.requested->>'timeZone') FROM timer t WHERE t.step_id = s.id),
                    (SELECT json_build_object('room', 'event') FROM event_wait e WHERE e.step_id = s.id),
                    (SELECT json_build_object('room', 'children', 'ended', c.children_ended, 'total', c.children_total) FROM child_wait c WHERE c.step_id = s.id)) END,
                  'updatedAt', s.updated_at, 'completedAt', s.completed_at
                ) ORDER BY s.position), '[]'::json)
         FROM step s CROSS JOIN LATERAL (SELECT ${eligibleSince("s", "w")} AS at) since
         WHERE s.workflow_id = w.id
       ) AS steps
FROM workflow w
LEFT JOIN workflow_definition d ON d.kind = w.kind AND d.version = w.version
WHERE ${where}`;

/** By tracking token ($1), through the token's unique index: no scan, no comparison in JS. */
export const snapshotByToken: NamedSql = { name: "fl_projection_by_token", text: snapshotOf("w.tracking_token = $1") };

/** By workflow id ($1), for staff pages that show what the customer sees. */
export const snapshotByWorkflowId: NamedSql = { name: "fl_projection_by_workflow", text: snapshotOf("w.id = $1") };

/**
 * The headline an active workflow's end user sees (the alias `w` names its row), decided as
 * headlineOf decides it for a workflow whose status is active, so staff can count and list
 * requests by what their customers see without building each projection. read.db.test.ts holds
 * the two to the same answer.
 */
export const activeHeadlineOf = (w: string): string => `CASE
  WHEN EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = ${w}.id
                 AND (s.state = 'indeterminate' OR EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open')))
    THEN 'needs_review'
  WHEN EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = ${w}.id AND s.state IN ('ready', 'leased')
                 AND EXISTS (SELECT 1 FROM attempt a WHERE a.step_id = s.id AND a.outcome IN ('lease_lost', 'failed')))
    THEN 'recovering'
  WHEN EXISTS (SELECT 1 FROM step s JOIN event_wait e ON e.step_id = s.id WHERE s.workflow_id = ${w}.id AND s.state = 'waiting')
    THEN 'waiting'
  WHEN NOT EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = ${w}.id AND s.state IN ('ready', 'leased'))
   AND EXISTS (SELECT 1 FROM step s JOIN timer t ON t.step_id = s.id WHERE s.workflow_id = ${w}.id AND s.state = 'waiting')
    THEN 'scheduled'
  WHEN EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = ${w}.id
                 AND (s.attempts_started > 0 OR s.state IN ('completed', 'completed_without_effect'))
                 AND coalesce((SELECT ad.external_effect FROM adapter_definition ad WHERE ad.name = s.adapter AND ad.version = s.adapter_version), true))
    THEN 'waiting'
  ELSE 'preparing' END`;
