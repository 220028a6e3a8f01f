/**
 * The named SQL the request's page reads: one request, its steps, and the evidence of each step,
 * read by the request's step ids (every evidence table is indexed by step), never one step at a
 * time. Nothing here writes; the page's actions are in ./actions-sql.ts.
 */
import type { NamedSql } from "@/lib/engine/db";
import { requestVersionOf } from "@/lib/engine/sql/workflow";

/** Request $1 with its input cut at $2 characters, its version, and the database clock. */
export const readRequestHead: NamedSql = {
  name: "fl_page_read_request",
  text: `
SELECT w.id, w.kind, w.version, w.status, w.status_reason, w.requester, w.idempotency_key, w.tracking_token,
       w.created_at, w.updated_at, w.deadline_at, w.priority, w.concurrency_key, w.input_digest,
       left(w.input::text, $2) AS input_text, length(w.input::text) AS input_chars,
       ${requestVersionOf("w")} AS version_tag, now() AS db_now
FROM workflow w WHERE w.id = $1`,
};

/** The steps of request $1 in order, with their dependencies and receipt; a result cut at $2 characters. */
export const readRequestSteps: NamedSql = {
  name: "fl_page_read_steps",
  text: `
SELECT s.id, s.name, s.position, s.adapter, s.operation, s.step_class, s.state, s.state_reason, s.fencing_term,
       s.attempts_started, s.attempt_budget, s.created_at, s.updated_at, s.completed_at, s.request_identity,
       (SELECT coalesce(array_agg(d.depends_on_step_id::text ORDER BY d.depends_on_step_id), '{}') FROM step_dependency d WHERE d.step_id = s.id) AS depends_on,
       r.id AS receipt_id, r.attempt_id AS receipt_attempt_id, r.verification_method, r.external_reference AS receipt_reference,
       r.fencing_term AS receipt_term, r.epoch AS receipt_epoch, r.created_at AS receipt_at,
       left(r.observed_result::text, $2) AS result_text, length(r.observed_result::text) AS result_chars
FROM step s
LEFT JOIN receipt_step rs ON rs.step_id = s.id
LEFT JOIN receipt r ON r.id = rs.receipt_id
WHERE s.workflow_id = $1
ORDER BY s.position, s.id`,
};

/** Every attempt (with its lease, one to one) of steps $1, in term order. */
export const readRequestAttempts: NamedSql = {
  name: "fl_page_read_attempts",
  text: `
SELECT a.id, a.step_id, a.fencing_term, a.epoch, a.owner_session_id, a.mode, a.checkpoint, a.created_at,
       a.invocation_began_at, a.response_observed_at, a.ended_at, a.expires_at, a.renewed_at, a.outcome,
       a.outcome_reason, a.end_reason, a.observed_effect, a.external_reference
FROM attempt a WHERE a.step_id = ANY($1::uuid[])
ORDER BY a.step_id, a.fencing_term`,
};

export const readRequestLateObservations: NamedSql = {
  name: "fl_page_read_late_observations",
  text: `
SELECT o.id, o.step_id, o.attempt_id, o.fencing_term, o.operation, o.external_reference, o.at
FROM late_observation o WHERE o.step_id = ANY($1::uuid[]) ORDER BY o.at, o.id`,
};

export const readRequestRejections: NamedSql = {
  name: "fl_page_read_rejections",
  text: `
SELECT f.id, f.step_id, f.operation, f.presented_term, f.current_term, f.reason, f.at
FROM fencing_rejection f WHERE f.step_id = ANY($1::uuid[]) ORDER BY f.at, f.id`,
};

/** Recovery decisions of steps $1 with their reason (the rule's, or the next attempt's mode). */
export const readRequestDecisions: NamedSql = {
  name: "fl_page_read_decisions",
  text: `
SELECT d.id, d.step_id, d.attempt_id, d.fencing_term, d.trigger, d.category, d.decided_at, d.decided_by,
       coalesce(d.evidence->'decision'->>'reason',
                'next attempt: ' || replace(d.evidence->'decision'->>'nextMode', '_', ' '),
                d.evidence->'decision'->>'source') AS reason,
       d.evidence->>'checkpoint' AS checkpoint
FROM recovery_decision d WHERE d.step_id = ANY($1::uuid[]) ORDER BY d.decided_at, d.id`,
};

export const readRequestReviewCases: NamedSql = {
  name: "fl_page_read_review_cases",
  text: `
SELECT c.id, c.step_id, c.reason, c.status, c.assignee, c.opened_at, c.review_by, c.resolution, c.resolved_by,
       c.resolved_at, c.external_reference
FROM review_case c WHERE c.workflow_id = $1 ORDER BY c.opened_at, c.id`,
};

/**
 * The webhook events request $1 produced and each one's deliveries. outbox_event is not indexed
 * by request (decision 007: nothing on the hot path reads it so), so this scans it: the page
 * asks for it when an operator opens the panel, never on its polls. Bounded by $2 events.
 */
export const readRequestWebhooks: NamedSql = {
  name: "fl_page_read_webhooks",
  text: `
SELECT e.id, e.type, e.created_at, e.prepared_at,
       coalesce((SELECT json_agg(json_build_object('id', d.id::text, 'endpointId', d.endpoint_id, 'url', ep.url, 'state', d.state,
                                                   'attempts', d.attempts, 'lastStatus', d.last_status, 'lastError', d.last_error,
                                                   'deliveredAt', d.delivered_at, 'nextAttemptAt', d.next_attempt_at) ORDER BY d.id)
                 FROM webhook_delivery d JOIN webhook_endpoint ep ON ep.id = d.endpoint_id WHERE d.event_id = e.id), '[]'::json) AS deliveries
FROM outbox_event e WHERE e.workflow_id = $1 ORDER BY e.created_at, e.id LIMIT $2`,
};
