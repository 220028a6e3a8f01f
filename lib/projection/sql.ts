/**
 * What the end-user projection reads: one workflow with its steps, in one statement. A step is
 * "interrupted" when an earlier try ended without a conclusion (authority lost or failed), and
 * "under review" while a review case is open. A reason is customer-facing only when support
 * wrote it while abandoning the request. The words come from the request's registered workflow
 * version; a step calls something outside Fenceline unless its adapter's registered contract
 * says otherwise.
 */
import type { NamedSql } from "@/lib/engine/db";

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
                  'updatedAt', s.updated_at, 'completedAt', s.completed_at
                ) ORDER BY s.position), '[]'::json)
         FROM step s WHERE s.workflow_id = w.id
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
  WHEN EXISTS (SELECT 1 FROM step s WHERE s.workflow_id = ${w}.id
                 AND (s.attempts_started > 0 OR s.state IN ('completed', 'completed_without_effect'))
                 AND coalesce((SELECT ad.external_effect FROM adapter_definition ad WHERE ad.name = s.adapter AND ad.version = s.adapter_version), true))
    THEN 'waiting'
  ELSE 'preparing' END`;
