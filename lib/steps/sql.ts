/** The engineer's reads of steps, and nothing else: every write goes through lib/engine. */
import type { NamedSql } from "@/lib/engine/db";
import { contractColumn } from "@/lib/engine/sql/contract";
import { liveServersOf } from "@/lib/engine/sql/registration";
import { waitingForCondition } from "@/lib/waits/sql";

const MICROS_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/**
 * Steps, most recently changed first. $1 state, $2 adapter, $3 workflow, $4 open review (bool),
 * $5 has rejection, $6 has late observation, $7 lease event kind, $8 recovery category,
 * $9/$10 event range for $7/$8/$14/$16/$17, $11/$12 cursor (updated_at, id), $13 limit, $14 entered unknown,
 * $15 duplicate external reference, $16 adapter repetition policy in a recovery decision, $17 has a
 * receipt, $18 waits now for (`time`, `event`). NULL means any.
 */
export const listSteps: NamedSql = {
  name: "fl_eng_list_steps",
  text: `
SELECT s.id, s.workflow_id, w.kind AS workflow_kind, s.name, s.adapter, s.operation, s.step_class,
       s.state, s.state_reason, s.fencing_term, s.attempts_started, s.attempt_budget, s.updated_at,
       to_char(s.updated_at AT TIME ZONE 'UTC', ${MICROS_ISO}) AS updated_key,
       l.fencing_term AS lease_term, l.epoch AS lease_epoch, l.owner_session_id AS lease_owner,
       l.leased_at AS lease_leased_at, l.expires_at AS lease_expires_at,
       EXISTS (SELECT 1 FROM review_case rc WHERE rc.step_id = s.id AND rc.status = 'open') AS open_review,
       (SELECT count(*)::int FROM fencing_rejection fr WHERE fr.step_id = s.id) AS fencing_rejections
FROM step s
JOIN workflow w ON w.id = s.workflow_id
LEFT JOIN lease l ON l.step_id = s.id AND l.ended_at IS NULL
WHERE ($1::step_state IS NULL OR s.state = $1)
  AND ($2::text IS NULL OR s.adapter = $2)
  AND ($3::uuid IS NULL OR s.workflow_id = $3)
  AND ($4::boolean IS NULL OR $4 = EXISTS (SELECT 1 FROM review_case rc WHERE rc.step_id = s.id AND rc.status = 'open'))
  AND ($5::boolean IS NULL OR $5 = EXISTS (SELECT 1 FROM fencing_rejection fr WHERE fr.step_id = s.id))
  AND ($6::boolean IS NULL OR $6 = EXISTS (SELECT 1 FROM late_observation lo WHERE lo.step_id = s.id))
  AND ($7::lease_event_kind IS NULL OR EXISTS (
        SELECT 1 FROM lease_history le WHERE le.step_id = s.id AND le.kind = $7
          AND ($9::timestamptz IS NULL OR le.at >= $9) AND ($10::timestamptz IS NULL OR le.at < $10)))
  AND ($8::recovery_category IS NULL OR EXISTS (
        SELECT 1 FROM recovery_decision rd WHERE rd.step_id = s.id AND rd.category = $8
          AND ($9::timestamptz IS NULL OR rd.decided_at >= $9) AND ($10::timestamptz IS NULL OR rd.decided_at < $10)))
  AND ($14::boolean IS NULL OR $14 = EXISTS (
        SELECT 1 FROM recovery_decision rd WHERE rd.step_id = s.id
          AND rd.evidence->>'checkpoint' = 'invocation_began' AND rd.evidence->>'observedEffect' IS NULL
          AND coalesce((rd.evidence->>'receiptExists')::boolean, false) = false
          AND ($9::timestamptz IS NULL OR rd.decided_at >= $9) AND ($10::timestamptz IS NULL OR rd.decided_at < $10)))
  AND ($15::boolean IS NULL OR $15 = (
        SELECT count(DISTINCT ref) > 1 FROM (
          SELECT external_reference AS ref FROM attempt a WHERE a.step_id = s.id AND a.external_reference IS NOT NULL
          UNION ALL SELECT external_reference FROM late_observation lo WHERE lo.step_id = s.id AND lo.external_reference IS NOT NULL
          UNION ALL SELECT external_reference FROM receipt r WHERE r.step_id = s.id AND r.external_reference IS NOT NULL) refs))
  AND ($16::text IS NULL OR EXISTS (
        SELECT 1 FROM recovery_decision rd WHERE rd.step_id = s.id AND rd.evidence->'adapter'->>'repetition' = $16
          AND ($9::timestamptz IS NULL OR rd.decided_at >= $9) AND ($10::timestamptz IS NULL OR rd.decided_at < $10)))
  AND ($17::boolean IS NULL OR $17 = EXISTS (
        SELECT 1 FROM receipt r WHERE r.step_id = s.id
          AND ($9::timestamptz IS NULL OR r.created_at >= $9) AND ($10::timestamptz IS NULL OR r.created_at < $10)))
  AND ${waitingForCondition("$18", "s.id")}
  AND ($11::timestamptz IS NULL OR (s.updated_at, s.id) < ($11::timestamptz, $12::uuid))
ORDER BY s.updated_at DESC, s.id DESC
LIMIT $13`,
};

/** $1 step: the step, its class's TTL, its workflow and the workflow's steps; and the database clock. */
export const readStep: NamedSql = {
  name: "fl_eng_read_step",
  text: `
SELECT s.*, sc.lease_ttl_ms, now() AS db_now,
       ${contractColumn("s.adapter", "s.adapter_version")} AS contract,
       w.kind AS workflow_kind, w.version AS workflow_version, ${liveServersOf("w.kind", "w.version")} AS workflow_served_by,
       w.status AS workflow_status, w.status_reason AS workflow_status_reason,
       w.requester AS workflow_requester, w.created_at AS workflow_created_at, w.deadline_at AS workflow_deadline_at,
       w.trace_parent AS workflow_trace_parent,
       (SELECT json_agg(json_build_object('id', o.id, 'name', o.name, 'adapter', o.adapter, 'state', o.state,
                                          'fencingTerm', o.fencing_term) ORDER BY o.position)
        FROM step o WHERE o.workflow_id = s.workflow_id) AS workflow_steps
FROM step s
JOIN workflow w ON w.id = s.workflow_id
JOIN step_class sc ON sc.name = s.step_class
WHERE s.id = $1`,
};

/** Every lease term of step $1, oldest first. */
export const readLeases: NamedSql = {
  name: "fl_eng_read_leases",
  text: `SELECT * FROM lease WHERE step_id = $1 ORDER BY fencing_term`,
};

/**
 * Lease events of step $1 in the order they happened: those written, and `acquired` and
 * `released`, which are the attempt's start and end.
 */
export const readLeaseEvents: NamedSql = {
  name: "fl_eng_read_lease_events",
  text: `SELECT * FROM lease_history WHERE step_id = $1 ORDER BY at, id`,
};

export const readAttempts: NamedSql = {
  name: "fl_eng_read_attempts",
  text: `SELECT * FROM attempt WHERE step_id = $1 ORDER BY fencing_term`,
};

export const readReceipts: NamedSql = {
  name: "fl_eng_read_receipts",
  text: `SELECT * FROM receipt WHERE step_id = $1 ORDER BY created_at`,
};

export const readLateObservations: NamedSql = {
  name: "fl_eng_read_late_observations",
  text: `SELECT * FROM late_observation WHERE step_id = $1 ORDER BY at, id`,
};

export const readRecoveryDecisions: NamedSql = {
  name: "fl_eng_read_recovery_decisions",
  text: `SELECT * FROM recovery_decision WHERE step_id = $1 ORDER BY decided_at, id`,
};

export const readFencingRejections: NamedSql = {
  name: "fl_eng_read_fencing_rejections",
  text: `SELECT * FROM fencing_rejection WHERE step_id = $1 ORDER BY at, id`,
};

export const readPermits: NamedSql = {
  name: "fl_eng_read_permits",
  text: `SELECT * FROM adapter_permit WHERE step_id = $1 ORDER BY acquired_at`,
};

export const readReviewCases: NamedSql = {
  name: "fl_eng_read_review_cases",
  text: `SELECT * FROM review_case WHERE step_id = $1 ORDER BY opened_at`,
};
