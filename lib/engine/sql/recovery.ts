/**
 * Recovery statements. The scan locks a bounded batch of expired open leases (on their attempts' rows) (SKIP LOCKED, so
 * several scanners share the work without overlap), reads each attempt's durable evidence and
 * the registered contract of the adapter it called, and the caller decides in
 * lib/engine/recovery-rules.ts. Every write that follows is guarded again
 * by the term it observed.
 */
import type { NamedSql } from "../db";
import { holdsAuthority } from "./authority";
import { contractColumn } from "./contract";

const evidenceColumns = `
  a.step_id, a.fencing_term, a.epoch, a.id AS attempt_id, a.expires_at, a.owner_session_id, a.workflow_id,
  a.checkpoint, a.mode, a.request_identity, a.external_reference, a.observed_result, a.observed_effect,
  EXISTS (
    SELECT 1 FROM attempt p
    WHERE p.step_id = a.step_id AND p.fencing_term < a.fencing_term
      AND p.invocation_began_at IS NOT NULL AND p.observed_effect IS NULL
  ) AS earlier_outcome_unknown,
  s.adapter, coalesce(a.adapter_version, s.adapter_version) AS adapter_version,
  ${contractColumn("s.adapter", "coalesce(a.adapter_version, s.adapter_version)")} AS contract,
  s.attempt_budget, s.attempts_started,
  -- A step that undoes another reads its request being undone as active: it may still run
  -- (lib/compensation), past the request's deadline too.
  CASE WHEN s.undoes_step_id IS NOT NULL AND w.status IN ('cancelling', 'failing') THEN 'active' ELSE w.status END AS workflow_status,
  (w.deadline_at IS NOT NULL AND w.deadline_at <= now() AND s.undoes_step_id IS NULL) AS workflow_deadline_passed,
  s.undoes_step_id IS NOT NULL AS undoes_step,
  EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = a.step_id) AS receipt_exists,
  (
    SELECT coalesce(jsonb_agg(jsonb_build_object(
             'id', o.id::text, 'requestIdentity', o.request_identity, 'externalReference', o.external_reference)
           ORDER BY o.id), '[]'::jsonb)
    FROM late_observation o
    WHERE o.step_id = a.step_id AND o.external_reference IS NOT NULL
  ) AS late_observations`;

// The attempt row carries the lease.
const evidenceJoins = `
  FROM attempt a
  JOIN step s ON s.id = a.step_id
  JOIN workflow w ON w.id = a.workflow_id`;

/** Locks up to $1 open leases whose expiry has passed on the database clock, oldest first. */
export const lockExpiredLeases: NamedSql = {
  name: "fl_lock_expired_leases",
  text: `
SELECT ${evidenceColumns}
${evidenceJoins}
WHERE a.ended_at IS NULL AND a.expires_at <= now()
ORDER BY a.expires_at
LIMIT $1
FOR UPDATE OF a SKIP LOCKED`,
};

/** Reads the evidence of one lease ($1 step, $2 term) that this transaction has just ended. */
export const readLeaseEvidence: NamedSql = {
  name: "fl_read_lease_evidence",
  text: `
SELECT ${evidenceColumns}
${evidenceJoins}
WHERE a.step_id = $1 AND a.fencing_term = $2`,
};

/**
 * Ends expired leases ($1 steps, $2 observed terms) found by the scan: still open, still expired,
 * still the observed term. Records `expiry_observed`; the attempt, which carries the lease and
 * had not concluded while it was open, has lost its lease.
 */
export const endExpiredLeases: NamedSql = {
  name: "fl_end_expired_leases",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[]) AS r(step_id, fencing_term)
),
ended AS (
  -- An open lease's attempt has not concluded: it lost its lease.
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'expired', outcome = 'lease_lost', outcome_reason = 'lease expired'
  FROM request r
  WHERE l.step_id = r.step_id
    AND l.fencing_term = r.fencing_term
    AND l.ended_at IS NULL
    AND l.expires_at <= now()
  RETURNING l.step_id, l.fencing_term, l.epoch, l.owner_session_id, l.expires_at
),
observed AS (
  INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, expires_at)
  SELECT step_id, fencing_term, epoch, owner_session_id, 'expiry_observed', 'expired on the database clock', expires_at
  FROM ended
)
SELECT step_id, fencing_term FROM ended`,
};

/** An engineer revokes the open lease of step $1 ($2 reason, $3 actor). */
export const revokeOpenLease: NamedSql = {
  name: "fl_revoke_open_lease",
  text: `
WITH revoked AS (
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'revoked', outcome = 'lease_lost', outcome_reason = 'lease revoked'
  WHERE l.step_id = $1 AND l.ended_at IS NULL
  RETURNING l.step_id, l.fencing_term, l.epoch, l.owner_session_id
),
event AS (
  INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason)
  SELECT step_id, fencing_term, epoch, owner_session_id, 'revoked', $2 || ' (by ' || $3 || ')' FROM revoked
)
SELECT step_id, fencing_term FROM revoked`,
};

/**
 * A worker of session $1 reports that its attempt ($2 step, $3 term) failed ($4 reason). Fenced
 * by the authority guard (./authority.ts); the caller then lets recovery decide from the evidence.
 */
export const failAttempt: NamedSql = {
  name: "fl_fail_attempt",
  text: `
WITH authority AS (
  -- The attempt's end is its lease's 'released' event.
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'failed', outcome = 'failed', outcome_reason = $4
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
  RETURNING l.step_id, l.fencing_term
)
SELECT step_id, fencing_term FROM authority`,
};

/** Records why each ended lease led to its action. */
export const recordRecoveryDecisions: NamedSql = {
  name: "fl_record_recovery_decisions",
  text: `
INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence,
                               observed_expires_at, decided_by)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::recovery_trigger[],
                     $6::recovery_category[], $7::jsonb[], $8::timestamptz[], $9::text[])`,
};

/**
 * Makes steps ready again ($1 steps, $2 terms that were decided on, $3 next mode, $4 delay ms,
 * $5 reason). Guarded by the decided term so a step that moved on is left alone.
 */
export const makeStepsReady: NamedSql = {
  name: "fl_make_steps_ready",
  text: `
UPDATE step s
SET state = 'ready', next_mode = r.next_mode,
    next_eligible_at = now() + r.delay_ms * interval '1 millisecond',
    state_reason = r.reason, updated_at = now()
FROM unnest($1::uuid[], $2::bigint[], $3::attempt_mode[], $4::int[], $5::text[])
  AS r(step_id, fencing_term, next_mode, delay_ms, reason)
WHERE s.id = r.step_id AND s.fencing_term = r.fencing_term AND s.state = 'leased'
RETURNING s.id`,
};

/**
 * Puts steps whose outcome only a person can settle under review ($1 steps, $2 terms, $3 reasons,
 * $4 evidence, $5 review-by hours). One open case per step, enforced by a unique index; each case
 * opened writes a `request.needs_review` outbox event.
 */
export const openReviewCases: NamedSql = {
  name: "fl_open_review_cases",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::jsonb[]) AS r(step_id, fencing_term, reason, evidence)
),
indeterminate AS (
  UPDATE step s
  SET state = 'indeterminate', state_reason = r.reason, updated_at = now()
  FROM request r
  WHERE s.id = r.step_id AND s.fencing_term = r.fencing_term AND s.state = 'leased'
  RETURNING s.id, s.workflow_id
),
opened AS (
  INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by)
  SELECT i.id, i.workflow_id, r.reason, r.evidence, now() + $5::int * interval '1 hour'
  FROM indeterminate i JOIN request r ON r.step_id = i.id
  RETURNING id, step_id, workflow_id
),
needs_review_event AS (
  INSERT INTO outbox_event (type, workflow_id, detail)
  SELECT 'request.needs_review', workflow_id, jsonb_build_object('reviewCaseId', id) FROM opened
)
SELECT id, step_id FROM opened`,
};

/**
 * Ends steps that will not run again ($1 steps, $2 terms, $3 final state, $4 reason). A failed
 * step fails its workflow with the same reason, cancels the workflow's waiting steps, and writes
 * its `request.could_not_be_completed` outbox event.
 */
export const endSteps: NamedSql = {
  name: "fl_end_steps",
  text: `
WITH request AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::step_state[], $4::text[]) AS r(step_id, fencing_term, state, reason)
),
ended AS (
  UPDATE step s
  SET state = r.state, state_reason = r.reason, completed_at = now(), updated_at = now()
  FROM request r
  WHERE s.id = r.step_id AND s.fencing_term = r.fencing_term AND s.state = 'leased'
  RETURNING s.id, s.workflow_id, s.state, s.state_reason
),
failed AS (
  UPDATE workflow w
  SET status = 'failed', status_reason = e.state_reason, updated_at = now()
  FROM ended e
  WHERE w.id = e.workflow_id AND e.state = 'failed' AND w.status = 'active'
  RETURNING w.id
),
-- A step that waits (a timer, an event) would otherwise wait on for a request that has ended.
waits_cancelled AS (
  UPDATE step s
  SET state = 'cancelled', state_reason = 'request could not be completed', completed_at = now(), updated_at = now()
  FROM failed f
  WHERE s.workflow_id = f.id AND s.state = 'waiting'
)
INSERT INTO outbox_event (type, workflow_id)
SELECT 'request.could_not_be_completed', id FROM failed`,
};
