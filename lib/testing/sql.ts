/** The statements only the test kit runs: set-up and the test's own moves of the database clock. */
import type { NamedSql } from "@/lib/engine/db";

/** A step class the adopter's workflows name, as an admin would add it. */
export const upsertStepClass: NamedSql = {
  name: "fl_testing_upsert_step_class",
  text: `
INSERT INTO step_class (name, lease_ttl_ms, renew_every_ms, attempt_deadline_ms, grace_ms) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name) DO UPDATE SET lease_ttl_ms = $2, renew_every_ms = $3, attempt_deadline_ms = $4, grace_ms = $5`,
};

export const stepIdByName: NamedSql = {
  name: "fl_testing_step_id_by_name",
  text: `SELECT id FROM step WHERE workflow_id = $1 AND name = $2`,
};

export const stepStates: NamedSql = {
  name: "fl_testing_step_states",
  text: `SELECT name, state, state_reason, fencing_term::text AS fencing_term FROM step WHERE workflow_id = $1 ORDER BY position`,
};

export const openReviewCases: NamedSql = {
  name: "fl_testing_open_review_cases",
  text: `
SELECT c.id, s.name AS step, c.reason, c.version
  FROM review_case c JOIN step s ON s.id = c.step_id
 WHERE s.workflow_id = $1 AND c.status = 'open'
 ORDER BY c.opened_at, c.id`,
};

export const reviewCaseVersion: NamedSql = {
  name: "fl_testing_review_case_version",
  text: `SELECT version FROM review_case WHERE id = $1`,
};

/**
 * The step's open lease (of `fencing_term` when given) expires a millisecond ago on the
 * database clock: the evidence recovery reads is the one a lease that outlived its TTL leaves,
 * without the test waiting the TTL. leased_at stays before expires_at.
 */
export const expireLease: NamedSql = {
  name: "fl_testing_expire_lease",
  text: `
UPDATE lease SET leased_at = least(leased_at, now() - interval '1 hour'),
                 expires_at = now() - interval '1 millisecond'
 WHERE step_id = $1 AND ended_at IS NULL AND ($2::bigint IS NULL OR fencing_term = $2::bigint)
RETURNING fencing_term::text AS fencing_term`,
};

/**
 * Whether the lease of step $1 at term $2 has already passed its expiry: open with its expiry
 * behind the database clock, or ended by an expiry that recovery observed.
 */
export const leaseAlreadyExpired: NamedSql = {
  name: "fl_testing_lease_already_expired",
  text: `
SELECT (ended_at IS NULL AND expires_at <= now()) OR end_reason = 'expired' AS expired
  FROM lease WHERE step_id = $1 AND fencing_term = $2::bigint`,
};

/**
 * The database clock passes $1 ms for the waits of this environment's requests: every waiting
 * timer and wait timeout comes that much closer, as if the time had passed, without the test
 * sleeping. What is then due is fired by the keepers, on the database clock as always.
 */
export const passTimeForWaits: NamedSql = {
  name: "fl_testing_pass_time_for_waits",
  text: `
WITH timers AS (
  UPDATE timer SET due_at = due_at - $1::bigint * interval '1 millisecond' WHERE state = 'waiting' RETURNING step_id
),
timeouts AS (
  UPDATE event_wait SET timeout_at = timeout_at - $1::bigint * interval '1 millisecond'
  WHERE state = 'waiting' AND timeout_at IS NOT NULL RETURNING step_id
)
-- What came due: the statement's snapshot still shows the times before the move.
SELECT (SELECT count(*) FROM timer t JOIN timers m USING (step_id) WHERE t.due_at - $1::bigint * interval '1 millisecond' <= now())::int
     + (SELECT count(*) FROM event_wait e JOIN timeouts m USING (step_id) WHERE e.timeout_at - $1::bigint * interval '1 millisecond' <= now())::int AS due`,
};
