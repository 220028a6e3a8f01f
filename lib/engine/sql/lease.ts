/**
 * Lease statements. Every one is judged by the database clock (now()). Renewal and release carry
 * the authority guard (./authority.ts) in their WHERE clause. The lease lives on its attempt's row
 * (alias \`l\` below), and that row is the serialisation point: every fenced write locks it first,
 * so a concurrent recovery or renewal of the same lease waits and re-checks. A release is the
 * lease's `released` event; only renewals and refusals are written as lease events here.
 */
import type { NamedSql } from "../db";
import { sqlWord, type Checkpoint, type RenewalRefusalReason } from "../vocabulary";
import { holdsAuthority, refusalCases } from "./authority";

const MS = "interval '1 millisecond'";
const reason = (word: RenewalRefusalReason): string => sqlWord(word);
const checkpoint = (word: Checkpoint): string => sqlWord(word);
/** The largest fencing term PostgreSQL's bigint holds. */
export const MAX_TERM = "9223372036854775807";

/**
 * Claims up to `limit` ready steps for session $1 among the workflow versions it serves ($2
 * kinds, $3 versions, pairwise): highest priority first, then lowest fair-share position (keys
 * take turns: migration 20261207100000_fair_share), then oldest eligibility. A step queued behind
 * its concurrency key (eligible at 'infinity') is not claimable; the index step_claim_idx holds
 * exactly the claimable ready steps in this order. Each claim bumps the step's fencing term and
 * writes a new attempt carrying its lease, in this one statement; the lease's `acquired` event is
 * the attempt's start.
 * The lease never reaches past the attempt deadline minus its grace. Nothing is
 * claimed while an epoch transition is in progress, nor for a destination left blocked by one.
 *
 * The limit is part of the text, one prepared statement per limit: with a parameter there,
 * PostgreSQL's generic plan assumes a tenth of the ready steps and costs out far above a custom
 * one, so it planned every claim afresh (0.5–0.9 ms each). Callers keep the limits few
 * (`claimSteps`).
 */
export function claimReadySteps(limit: number): NamedSql {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`claimReadySteps: limit must be a positive integer, got ${limit}`);
  return {
    name: `fl_claim_ready_steps_${limit}`,
    text: `
WITH candidate AS (
  SELECT s.id
  FROM step s
  WHERE s.state = 'ready'
    AND s.next_eligible_at <= now()
    -- Spelled out so the partial index's predicate is implied: now() is not a constant.
    AND s.next_eligible_at < 'infinity'
    -- The term must grow without wrapping: a step at the largest bigint fails closed.
    AND s.fencing_term < ${MAX_TERM}
    AND NOT EXISTS (SELECT 1 FROM epoch_transition t WHERE t.finished_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM destination_block b WHERE b.adapter = s.adapter)
    AND EXISTS (
      SELECT 1 FROM workflow w
      WHERE w.id = s.workflow_id
        -- A request being undone (lib/compensation) runs only the steps that undo others, past its deadline too.
        AND (w.status = 'active' AND (w.deadline_at IS NULL OR w.deadline_at > now())
             OR w.status IN ('cancelling', 'failing') AND s.undoes_step_id IS NOT NULL)
        AND (w.kind, w.version) IN (SELECT * FROM unnest($2::text[], $3::int[]))
    )
  ORDER BY s.priority DESC, s.fair_position, s.next_eligible_at, s.id
  LIMIT ${limit}
  FOR UPDATE OF s SKIP LOCKED
),
claimed AS (
  UPDATE step s
  SET state = 'leased',
      fencing_term = s.fencing_term + 1,
      attempts_started = s.attempts_started + 1,
      updated_at = now()
  -- By primary key whatever the statistics say: a join here may be planned as a scan of every
  -- step while the table's statistics lag behind a burst of new work.
  WHERE s.id = ANY(ARRAY(SELECT id FROM candidate)) AND s.state = 'ready'
  RETURNING s.id, s.workflow_id, s.name, s.fencing_term, s.next_mode, s.request_identity, s.input_digest,
            s.adapter, s.adapter_version, s.operation, s.step_class, s.attempts_started, s.attempt_budget
),
policy AS (
  SELECT c.*, w.kind, w.version, w.input, w.trace_parent, sc.lease_ttl_ms, sc.renew_every_ms, sc.attempt_deadline_ms, sc.grace_ms,
         sc.policy_version, now() + sc.attempt_deadline_ms * ${MS} AS deadline_at,
         fl_current_epoch() AS epoch
  FROM claimed c JOIN step_class sc ON sc.name = c.step_class JOIN workflow w ON w.id = c.workflow_id
),
new_attempt AS (
  -- The attempt row carries the lease: one row per claim.
  INSERT INTO attempt (step_id, workflow_id, fencing_term, epoch, owner_session_id, mode,
                       request_identity, input_digest, deadline_at, policy_version, expires_at)
  SELECT id, workflow_id, fencing_term, epoch, $1, next_mode, request_identity, input_digest, deadline_at,
         policy_version, least(now() + lease_ttl_ms * ${MS}, deadline_at - grace_ms * ${MS})
  FROM policy
  RETURNING id AS attempt_id, step_id, expires_at, checkpoint_version
)
SELECT p.id AS step_id, p.workflow_id, p.kind, p.version AS workflow_version, p.name AS step_name, p.fencing_term,
       p.epoch, l.attempt_id, p.next_mode AS mode, p.request_identity, p.input, p.input_digest, p.adapter,
       p.adapter_version, p.operation, p.step_class,
       p.attempts_started, p.attempt_budget, p.renew_every_ms, p.lease_ttl_ms, p.grace_ms, p.attempt_deadline_ms,
       p.deadline_at, l.expires_at, l.checkpoint_version, now() AS db_now, p.trace_parent,
       -- Each dependency's receipt id, through receipt_step; the receipts themselves are read by
       -- dependencyReceipts, never by this statement: PostgreSQL 18.3 and 18.4 crash (signal 11)
       -- in run-time partition pruning of receipt here under concurrent claims, whether the probe
       -- is a subquery or a lateral join (decision 021).
       (SELECT coalesce(jsonb_object_agg(d.name, rs.receipt_id), '{}')
        FROM step_dependency sd JOIN step d ON d.id = sd.depends_on_step_id
        JOIN receipt_step rs ON rs.step_id = d.id
        WHERE sd.step_id = p.id) AS dependency_receipts
FROM policy p JOIN new_attempt l ON l.step_id = p.id`,
  };
}

/**
 * The observed results of receipts $1 (ids), for the claimed steps' dependencies. The ids are a
 * parameter, not a join: receipt is pruned to the months they name when the statement is planned
 * or started, never per row while it runs (see claimReadySteps). Receipts are permanent, so
 * reading them after the claim commits reads what the claim saw.
 */
/**
 * How often steps $1 (ids) waited: their attempts that ended by giving the step back to wait
 * (released with a reason starting $2), with when the first and the latest began to wait.
 */
export const stepWaits: NamedSql = {
  name: "fl_step_waits",
  text: `
SELECT a.step_id, count(*)::int AS count, min(a.ended_at) AS first_at, max(a.ended_at) AS last_at
  FROM attempt a
 WHERE a.step_id = ANY($1::uuid[]) AND a.outcome = 'released' AND starts_with(a.outcome_reason, $2)
 GROUP BY a.step_id`,
};

export const dependencyReceipts: NamedSql = {
  name: "fl_dependency_receipts",
  text: `SELECT r.id, r.observed_result, r.external_reference FROM receipt r WHERE r.id = ANY($1::uuid[])`,
};

/**
 * Renews leases of session $1: ($2 step, $3 term, $4 checkpoint version) triples. A renewal is
 * granted only while owner, term and checkpoint version match, the lease is open, unexpired and of
 * the current epoch, the workflow is active, the step class's policy is the one the lease was
 * granted under, and the attempt deadline minus grace is still ahead. Refusals are explained and
 * recorded as `renewal_refused` lease events in the same statement.
 */
export const renewLeases: NamedSql = {
  name: "fl_renew_leases",
  text: `
WITH request AS (
  SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::int[]) AS r(step_id, fencing_term, checkpoint_version)
),
held AS (
  -- Locks each presented lease and reads its latest version: a revoke or expiry that commits
  -- while this waits is then named as such below, not guessed from an older snapshot.
  SELECT l.* FROM attempt l JOIN request r ON l.step_id = r.step_id AND l.fencing_term = r.fencing_term
  ORDER BY l.step_id
  FOR UPDATE OF l
),
renewed AS (
  UPDATE attempt l
  SET renewed_at = now(),
      expires_at = least(now() + sc.lease_ttl_ms * ${MS}, l.deadline_at - sc.grace_ms * ${MS})
  FROM held h, request r, step s, step_class sc
  -- Joining the locked rows makes the lock come first; the guard then names the lease to renew.
  WHERE h.step_id = r.step_id
    AND h.fencing_term = r.fencing_term
    AND ${holdsAuthority({ lease: "l", owner: "$1", step: "r.step_id", term: "r.fencing_term" })}
    AND l.checkpoint_version = r.checkpoint_version
    AND s.id = l.step_id
    AND sc.name = s.step_class
    AND l.policy_version = sc.policy_version
    AND now() < l.deadline_at - sc.grace_ms * ${MS}
  RETURNING l.step_id, l.fencing_term, l.epoch, l.expires_at
),
refused AS (
  SELECT r.step_id, r.fencing_term, coalesce(l.epoch, fl_current_epoch()) AS epoch,
         CASE ${refusalCases({ lease: "l", stepRow: "s", workflowRow: "w", owner: "$1", term: "r.fencing_term" })}
           WHEN l.policy_version <> sc.policy_version THEN ${reason("policy_changed")}
           WHEN l.checkpoint_version <> r.checkpoint_version THEN ${reason("checkpoint_version_mismatch")}
           WHEN now() >= l.deadline_at - sc.grace_ms * ${MS} THEN ${reason("deadline_reached")}
           ELSE ${reason("changed_while_renewing")}
         END AS reason
  FROM request r
  JOIN step s ON s.id = r.step_id
  JOIN step_class sc ON sc.name = s.step_class
  JOIN workflow w ON w.id = s.workflow_id
  LEFT JOIN held l ON l.step_id = r.step_id AND l.fencing_term = r.fencing_term
  WHERE NOT EXISTS (SELECT 1 FROM renewed x WHERE x.step_id = r.step_id)
),
events AS (
  INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, expires_at)
  SELECT step_id, fencing_term, epoch, $1, 'renewed'::lease_event_kind, NULL, expires_at FROM renewed
  UNION ALL
  SELECT step_id, fencing_term, epoch, $1, 'renewal_refused'::lease_event_kind, reason, NULL FROM refused
)
SELECT step_id, fencing_term, expires_at, NULL AS reason, now() AS db_now FROM renewed
UNION ALL
SELECT step_id, fencing_term, NULL, reason, now() FROM refused`,
};

/**
 * Hands back the lease of session $1 on ($2 step, $3 term) for reason $4, and makes the step
 * ready again after $5 ms: graceful shutdown (no delay), or a wait (rate limit, no adapter
 * capacity) that must not hold a lease. Allowed while no invocation has begun, or, with $6, after
 * an invocation the destination answered without applying anything. The attempt is not charged to
 * the step's budget: a wait is not a try. A step whose identity is persisted retries with it.
 */
export const releaseLease: NamedSql = {
  name: "fl_release_lease",
  text: `
WITH authority AS (
  -- Ends the lease and concludes its attempt: one row.
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'released', outcome = 'released', outcome_reason = $4,
      observed_effect = CASE WHEN l.checkpoint = 'invocation_began' THEN 'absent'::effect_observation ELSE l.observed_effect END
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
    AND (l.checkpoint IN (${checkpoint("created")}, ${checkpoint("identity_persisted")})
         OR ($6::boolean AND l.checkpoint = ${checkpoint("invocation_began")}))
  RETURNING l.step_id
),
step_ready AS (
  UPDATE step s
  SET state = 'ready', attempts_started = s.attempts_started - 1,
      next_mode = CASE WHEN s.next_mode = 'execute' AND s.request_identity IS NOT NULL
                       THEN 'retry_same_identity'::attempt_mode ELSE s.next_mode END,
      next_eligible_at = now() + $5::int * ${MS}, state_reason = $4, updated_at = now()
  FROM authority au
  WHERE s.id = au.step_id AND s.state = 'leased'
)
SELECT step_id FROM authority`,
};
