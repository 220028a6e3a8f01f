/**
 * The independent checker: after a cell settles, SQL over the engine's tables and the destination
 * service's own tables decides SPEC.md's invariants 1–10, 12 and 13 (9 and 10: timers and events; 12: undos; 13: schedules). It calls no engine function and trusts
 * no engine summary: every verdict is a query over durable rows, judged on the database clock.
 *
 * A verdict carries up to five witnesses (the offending rows), so a failure says what it saw.
 */
import type pg from "pg";
import type { InvariantResult } from "./types";

const WITNESSES = 5;

export type CheckInput = {
  engine: pg.Pool;
  destination: pg.Pool;
  /** Every workflow the harness created and was told was accepted (set-full style). */
  acknowledgedWorkflowIds: readonly string[];
};

export type CheckOutcome = {
  invariants: InvariantResult[];
  staleWritesRejected: number;
  staleWritesAccepted: number;
  duplicateEffects: number;
  lostRequests: number;
  unknownOutsideReview: number;
  detail: Record<string, unknown>;
};

type Probe = { name: string; sql: string; params?: unknown[] };

async function rows(pool: pg.Pool, probe: Probe): Promise<Record<string, unknown>[]> {
  try {
    return (await pool.query(probe.sql, probe.params ?? [])).rows;
  } catch (error) {
    throw new Error(`checker query "${probe.name}" failed: ${String(error)}`, { cause: error });
  }
}

/** The end of a lease's authority: its expiry, or earlier if it was ended before expiring. */
const LEASE_END = `least(l.expires_at, coalesce(l.ended_at, l.expires_at))`;

// ── Invariant 1: at most one current lease governs a step ─────────────────────────────────────
const twoOpenLeases: Probe = {
  name: "two open leases",
  sql: `SELECT step_id, count(*)::int AS open_leases FROM lease WHERE ended_at IS NULL GROUP BY step_id HAVING count(*) > 1`,
};
const overlappingLeases: Probe = {
  name: "overlapping leases",
  sql: `
SELECT a.step_id, a.fencing_term AS term_a, b.fencing_term AS term_b,
       a.leased_at AS a_leased_at, ${LEASE_END.replaceAll("l.", "a.")} AS a_end, b.leased_at AS b_leased_at
FROM lease a JOIN lease b ON b.step_id = a.step_id AND b.fencing_term > a.fencing_term
WHERE tstzrange(a.leased_at, ${LEASE_END.replaceAll("l.", "a.")}) && tstzrange(b.leased_at, ${LEASE_END.replaceAll("l.", "b.")})`,
};
const termsNotIncreasing: Probe = {
  name: "terms not increasing with grant time",
  sql: `
SELECT step_id, fencing_term, leased_at, previous_term, previous_leased_at FROM (
  SELECT step_id, fencing_term, leased_at,
         lag(fencing_term) OVER w AS previous_term, lag(leased_at) OVER w AS previous_leased_at
  FROM lease WINDOW w AS (PARTITION BY step_id ORDER BY fencing_term)) t
WHERE previous_term IS NOT NULL AND previous_leased_at > leased_at`,
};

// ── Invariant 2: a stale worker commits no checkpoint or receipt ──────────────────────────────
/**
 * A receipt must carry its attempt's term, be written while that lease governed, and no newer lease
 * may exist before it. A waiting step's settlement (a timer fired, an event received or a timeout)
 * is written by a keeper after the arming attempt parked, under that attempt's term (decision 019).
 */
const staleReceipts: Probe = {
  name: "receipts from a stale term",
  sql: `
SELECT r.step_id, r.fencing_term AS receipt_term, a.fencing_term AS attempt_term, l.end_reason, r.created_at,
       l.expires_at, r.verification_method,
       (SELECT max(n.fencing_term) FROM lease n WHERE n.step_id = r.step_id AND n.leased_at <= r.created_at) AS newest_term_at_write,
       EXISTS (SELECT 1 FROM recovery_decision d WHERE d.step_id = r.step_id AND d.fencing_term = r.fencing_term AND d.category = 'reconcile') AS reconciled
FROM receipt r
LEFT JOIN attempt a ON a.id = r.attempt_id
LEFT JOIN lease l ON l.step_id = r.step_id AND l.fencing_term = r.fencing_term
WHERE r.verification_method <> 'manual_review' AND (
     a.id IS NULL OR a.fencing_term <> r.fencing_term OR l.step_id IS NULL
  OR (SELECT max(n.fencing_term) FROM lease n WHERE n.step_id = r.step_id AND n.leased_at <= r.created_at) <> r.fencing_term
  OR NOT (
       (l.end_reason = 'receipt' AND r.created_at < l.expires_at)
    OR (a.outcome = 'waiting' AND l.end_reason = 'released' AND l.ended_at <= r.created_at
        AND r.verification_method IN ('database_clock', 'event_received'))
    OR EXISTS (SELECT 1 FROM recovery_decision d WHERE d.step_id = r.step_id AND d.fencing_term = r.fencing_term AND d.category = 'reconcile')))`,
};
/** Checkpoints 3 and 4 must have been written while their lease governed the step. */
const staleCheckpoints: Probe = {
  name: "checkpoints written outside their lease",
  sql: `
SELECT a.step_id, a.fencing_term, a.checkpoint, a.invocation_began_at, a.response_observed_at, l.leased_at, l.expires_at, l.ended_at
FROM attempt a JOIN lease l ON l.step_id = a.step_id AND l.fencing_term = a.fencing_term
WHERE (a.invocation_began_at IS NOT NULL AND (a.invocation_began_at < l.leased_at OR a.invocation_began_at > ${LEASE_END}))
   OR (a.response_observed_at IS NOT NULL AND (a.response_observed_at < l.leased_at OR a.response_observed_at > ${LEASE_END}))`,
};
const attemptsWithoutLease: Probe = {
  name: "attempts without a lease of their term",
  sql: `SELECT a.id, a.step_id, a.fencing_term FROM attempt a
        LEFT JOIN lease l ON l.step_id = a.step_id AND l.fencing_term = a.fencing_term WHERE l.step_id IS NULL`,
};

// ── Invariant 3: every expiry enters evidence-based recovery ─────────────────────────────────
const expiriesWithoutDecision: Probe = {
  name: "expired or failed leases without a recovery decision",
  sql: `
SELECT l.step_id, l.fencing_term, l.end_reason FROM lease l
WHERE l.end_reason IN ('expired', 'failed', 'revoked')
  AND NOT EXISTS (SELECT 1 FROM recovery_decision d WHERE d.step_id = l.step_id AND d.fencing_term = l.fencing_term)`,
};
const duplicateDecisions: Probe = {
  name: "more than one recovery decision for one lease",
  sql: `SELECT step_id, fencing_term, count(*)::int AS decisions, array_agg(decided_by) AS decided_by
        FROM recovery_decision GROUP BY step_id, fencing_term HAVING count(*) > 1`,
};
const earlyExpiry: Probe = {
  name: "expiry decided before the lease expired on the database clock",
  sql: `
SELECT d.step_id, d.fencing_term, d.decided_at, d.observed_expires_at, l.expires_at
FROM recovery_decision d JOIN lease l ON l.step_id = d.step_id AND l.fencing_term = d.fencing_term
WHERE d.trigger = 'lease_expired'
  -- observed_expires_at may travel through a millisecond clock (a JS Date): compare to the millisecond.
  AND (d.decided_at < d.observed_expires_at OR abs(extract(epoch FROM d.observed_expires_at - l.expires_at)) >= 0.001)`,
};
/** A new term is granted only after the previous one was released before invocation, or recovery allowed it. */
const silentReruns: Probe = {
  name: "new term without a decision that allowed it",
  sql: `
SELECT n.step_id, n.fencing_term, p.end_reason AS previous_end, pa.checkpoint AS previous_checkpoint,
       (SELECT array_agg(d.category) FROM recovery_decision d WHERE d.step_id = p.step_id AND d.fencing_term = p.fencing_term) AS previous_decisions
FROM lease n
JOIN lease p ON p.step_id = n.step_id AND p.fencing_term = n.fencing_term - 1
JOIN attempt pa ON pa.id = p.attempt_id
WHERE NOT (
     (p.end_reason = 'released' AND (pa.checkpoint IN ('created', 'identity_persisted') OR pa.observed_effect = 'absent'))
  OR EXISTS (SELECT 1 FROM recovery_decision d WHERE d.step_id = p.step_id AND d.fencing_term = p.fencing_term
             AND d.category IN ('make_ready', 'retry_same_identity', 'retry_same_key', 'status_query')))`,
};

// ── Invariant 4: a request identity exists before any invocation ──────────────────────────────
const invocationsWithoutIdentity: Probe = {
  name: "invocations without a request identity",
  sql: `SELECT id, step_id, fencing_term, checkpoint FROM attempt
        WHERE checkpoint IN ('invocation_began', 'response_observed', 'receipt_committed') AND request_identity IS NULL`,
};
const identityChanged: Probe = {
  name: "attempts of one step presenting different request identities",
  sql: `SELECT step_id, array_agg(DISTINCT request_identity) AS identities FROM attempt
        WHERE request_identity IS NOT NULL GROUP BY step_id HAVING count(DISTINCT request_identity) > 1`,
};

// ── Invariant 5: completed ⇔ exactly one receipt; a receipt-less invoked step is unknown ───────
const completedWithoutOneReceipt: Probe = {
  name: "completed steps without exactly one receipt, or receipts on steps not completed",
  sql: `
SELECT s.id AS step_id, s.state, (SELECT count(*)::int FROM receipt r WHERE r.step_id = s.id) AS receipts
FROM step s
WHERE (s.state IN ('completed', 'completed_without_effect') AND (SELECT count(*) FROM receipt r WHERE r.step_id = s.id) <> 1)
   OR (s.state NOT IN ('completed', 'completed_without_effect') AND EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = s.id))`,
};
/**
 * Steps whose effect is unknown (an invocation began, no answer was observed, no receipt) and
 * that are not in an open review case: they must still be on their way (ready or leased for a
 * retry the contract allows) — after settling, none may be.
 */
const unknownOutsideReview: Probe = {
  name: "unknown outcomes outside review",
  sql: `
SELECT s.id AS step_id, s.adapter, s.state, s.state_reason
FROM step s
WHERE NOT EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = s.id)
  AND NOT EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open')
  AND EXISTS (SELECT 1 FROM attempt a WHERE a.step_id = s.id
              AND a.checkpoint IN ('invocation_began', 'response_observed')
              AND (a.observed_effect IS DISTINCT FROM 'absent'))`,
};

// ── Invariant 7: opaque unknowns reach review; none is retried automatically ──────────────────
const opaqueRetried: Probe = {
  name: "opaque steps invoked more than once",
  sql: `
SELECT s.id AS step_id, count(*)::int AS invocations, array_agg(a.fencing_term ORDER BY a.fencing_term) AS terms
FROM step s JOIN attempt a ON a.step_id = s.id
WHERE s.adapter = 'opaque' AND a.checkpoint IN ('invocation_began', 'response_observed', 'receipt_committed')
GROUP BY s.id HAVING count(*) > 1`,
};
const opaqueUnknownNotInReview: Probe = {
  name: "opaque unknown outcomes not in an open review case",
  sql: `
SELECT s.id AS step_id, s.state FROM step s
WHERE s.adapter = 'opaque'
  AND NOT EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = s.id)
  AND EXISTS (SELECT 1 FROM attempt a WHERE a.step_id = s.id AND a.checkpoint IN ('invocation_began', 'response_observed')
              AND a.observed_effect IS DISTINCT FROM 'absent')
  AND NOT (s.state = 'indeterminate' AND EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open'))`,
};

// ── Invariant 8: nothing acknowledged is lost ──────────────────────────────────────────────────
const unsettledWorkflows: Probe = {
  name: "acknowledged workflows neither terminal nor in open review",
  sql: `
SELECT ack.id AS workflow_id, w.status, (SELECT array_agg(s.state::text) FROM step s WHERE s.workflow_id = ack.id) AS step_states
FROM unnest($1::uuid[]) AS ack(id)
LEFT JOIN workflow w ON w.id = ack.id
WHERE w.id IS NULL
   OR (w.status NOT IN ('completed', 'failed', 'cancelled')
       AND NOT EXISTS (SELECT 1 FROM review_case c WHERE c.workflow_id = w.id AND c.status = 'open'))`,
};

// ── Invariant 9: a timer fires at most once, never early, and is not lost ─────────────────────
/** A timer step settled more than once shows as more than one receipt (or a step that ran twice after it). */
const timersFiredTwice: Probe = {
  name: "timers fired more than once",
  sql: `
SELECT t.step_id, t.state, count(r.id)::int AS receipts FROM timer t LEFT JOIN receipt r ON r.step_id = t.step_id
GROUP BY t.step_id, t.state HAVING count(r.id) > 1 OR (t.state = 'fired' AND count(r.id) <> 1)`,
};
/** Early on the database clock: fired, receipted or completed before due, or a dependant leased before it. */
const timersFiredEarly: Probe = {
  name: "timers fired before their due time (database clock)",
  sql: `
SELECT t.step_id, t.due_at, t.settled_at, s.completed_at, min(r.created_at) AS receipt_at, min(l.leased_at) AS dependant_leased_at
FROM timer t JOIN step s ON s.id = t.step_id
LEFT JOIN receipt r ON r.step_id = t.step_id
LEFT JOIN step_dependency d ON d.depends_on_step_id = t.step_id
LEFT JOIN lease l ON l.step_id = d.step_id
WHERE t.state = 'fired'
GROUP BY t.step_id, t.due_at, t.settled_at, s.completed_at
HAVING t.settled_at < t.due_at OR s.completed_at < t.due_at OR min(r.created_at) < t.due_at OR min(l.leased_at) < t.due_at`,
};
/** Lost: a timer step that did not end with its timer (still waiting, or completed without a fired timer). */
const timersLost: Probe = {
  name: "timers lost (due and not fired, or a timer step completed without one)",
  sql: `
SELECT s.id AS step_id, s.state, t.state AS timer_state, t.due_at FROM step s LEFT JOIN timer t ON t.step_id = s.id
WHERE s.adapter = 'fenceline.timer'
  AND ((t.state = 'waiting' AND t.due_at <= now())
    OR (s.state IN ('completed', 'completed_without_effect') AND t.state IS DISTINCT FROM 'fired')
    OR (t.state = 'fired' AND s.state NOT IN ('completed', 'completed_without_effect')))`,
};

// ── Invariant 10: an event is consumed at most once, and an accepted one is not lost ──────────
const eventsConsumedTwice: Probe = {
  name: "events consumed by more than one wait, or a wait and its event disagreeing",
  sql: `
SELECT e.id AS event_id, e.consumed_by_step_id, array_agg(w.step_id) AS waits,
       (SELECT count(*)::int FROM receipt r WHERE r.external_reference = e.id::text) AS receipts
FROM event e LEFT JOIN event_wait w ON w.event_id = e.id
GROUP BY e.id, e.consumed_by_step_id
HAVING count(w.step_id) > 1
    OR (SELECT count(*) FROM receipt r WHERE r.external_reference = e.id::text) > 1
    OR (count(w.step_id) = 1 AND e.consumed_by_step_id IS DISTINCT FROM min(w.step_id::text)::uuid)
    OR (count(w.step_id) = 0 AND e.consumed_by_step_id IS NOT NULL)`,
};
const eventsTwiceForOneKey: Probe = {
  name: "one sender's idempotency key stored as more than one event",
  sql: `SELECT sender, idempotency_key, count(*)::int AS events FROM event WHERE idempotency_key IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1`,
};
/**
 * An event that was there well before a wait for its name and key timed out, yet the wait timed
 * out and the event was never consumed. (An event whose transaction began within half a second of
 * the timeout may fairly lose that race: the wait times out and the event is kept.)
 */
const eventsMissed: Probe = {
  name: "events that arrived before their wait's timeout, left unconsumed while the wait timed out",
  sql: `
SELECT e.id AS event_id, e.received_at, w.step_id, w.armed_at, w.timeout_at, w.settled_at FROM event e
JOIN event_wait w ON w.name = e.name AND w.correlation_key = e.correlation_key
WHERE e.consumed_at IS NULL AND w.state = 'timed_out' AND e.received_at < w.timeout_at - interval '500 milliseconds'`,
};
const timeoutsEarly: Probe = {
  name: "event waits timed out before their timeout (database clock)",
  sql: `SELECT step_id, timeout_at, settled_at FROM event_wait WHERE state = 'timed_out' AND settled_at < timeout_at`,
};

// ── Invariant 12: an undo runs only for an effect with a receipt; undone means every undo has one ──
const undosWithoutEffect: Probe = {
  name: "undo steps of a step without a receipt, or of a completed request",
  sql: `
SELECT u.id AS step_id, u.name, w.status, EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = u.undoes_step_id) AS undone_step_has_receipt
FROM step u JOIN workflow w ON w.id = u.workflow_id
WHERE u.undoes_step_id IS NOT NULL
  AND (w.status = 'completed' OR NOT EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = u.undoes_step_id))`,
};
/**
 * A request reads cancelled, or its undoing finished, only once each of its undos has a receipt:
 * an undo whose outcome is unknown (in review) or abandoned is never counted as undone. (An
 * abandoned undo ends its request failed, its run unfinished.)
 */
const countedUndoneWithoutReceipt: Probe = {
  name: "requests cancelled, or their undoing finished, with an undo that has no receipt",
  sql: `
SELECT w.id AS workflow_id, w.status, c.finished_at, u.name, u.state
FROM step u JOIN workflow w ON w.id = u.workflow_id
LEFT JOIN compensation_run c ON c.workflow_id = u.workflow_id
WHERE u.undoes_step_id IS NOT NULL
  AND (w.status = 'cancelled' OR c.finished_at IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = u.id)`,
};

// ── Invariant 13: a schedule's due time starts at most one request; within catch-up, one ──────
const SCHEDULE_KEY = `'schedule:' || f.schedule_id || ':' || to_char(f.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const dueTimesStartedTwice: Probe = {
  name: "schedule due times that started more than one request, or a firing and its request disagreeing",
  sql: `
SELECT 'two requests' AS problem, w.idempotency_key AS key, count(*)::int AS requests FROM workflow w
WHERE w.idempotency_key LIKE 'schedule:%' GROUP BY w.idempotency_key HAVING count(*) > 1
UNION ALL
SELECT 'firing without its request', ${SCHEDULE_KEY}, 0 FROM schedule_firing f LEFT JOIN workflow w ON w.id = f.request_id
WHERE f.state = 'started' AND w.idempotency_key IS DISTINCT FROM ${SCHEDULE_KEY}
UNION ALL
SELECT 'request without its firing', w.idempotency_key, 1 FROM workflow w
WHERE w.idempotency_key LIKE 'schedule:%' AND NOT EXISTS (SELECT 1 FROM schedule_firing f WHERE f.request_id = w.id)`,
};
/**
 * Due times missed within the catch-up policy, for the schedules the checker can enumerate in SQL:
 * every second (`* * * * * *`) with catch-up `all`. Each second from the first firing to the last
 * due time the keepers reached must have its firing, and none may be counted missed.
 */
const dueTimesMissed: Probe = {
  name: "due times of every-second schedules with catch-up all that have no firing, or were counted missed",
  sql: `
SELECT s.name, g.due, s.missed FROM schedule s
CROSS JOIN LATERAL generate_series((SELECT min(f.due_at) FROM schedule_firing f WHERE f.schedule_id = s.id), s.last_due_at, interval '1 second') g(due)
WHERE s.cron = '* * * * * *' AND s.catch_up = 'all'
  AND NOT EXISTS (SELECT 1 FROM schedule_firing f WHERE f.schedule_id = s.id AND f.due_at = g.due)
UNION ALL
SELECT s.name, NULL, s.missed FROM schedule s WHERE s.cron = '* * * * * *' AND s.catch_up = 'all' AND s.missed > 0`,
};
/**
 * Due times of every-second schedules with catch-up `latest` or `none` fired other than as the
 * policy says: a pass at time T starts the latest due time reached (T − 1 s < due ≤ T), and every
 * due time it walks past unstarted is counted missed. The count is from the first firing on, so it
 * may be below `missed` (due times missed before the first firing), never above.
 */
const dueTimesNotLatest: Probe = {
  name: "firings of every-second schedules with catch-up latest or none that were not the latest due time, or due times neither fired nor counted missed",
  sql: `
SELECT s.name, f.due_at, w.created_at AS request_created_at, NULL::bigint AS unfired, s.missed FROM schedule s
JOIN schedule_firing f ON f.schedule_id = s.id JOIN workflow w ON w.id = f.request_id
WHERE s.cron = '* * * * * *' AND s.catch_up IN ('latest', 'none') AND w.created_at >= f.due_at + interval '1 second'
UNION ALL
SELECT s.name, NULL, NULL, u.unfired, s.missed FROM schedule s
CROSS JOIN LATERAL (
  SELECT count(*) AS unfired FROM generate_series((SELECT min(f.due_at) FROM schedule_firing f WHERE f.schedule_id = s.id), s.last_due_at, interval '1 second') g(due)
  WHERE NOT EXISTS (SELECT 1 FROM schedule_firing f WHERE f.schedule_id = s.id AND f.due_at = g.due)) u
WHERE s.cron = '* * * * * *' AND s.catch_up IN ('latest', 'none') AND u.unfired > s.missed`,
};
/**
 * A due time started early, judged by the request it started: its creation (the firing pass's
 * transaction time on the database clock, the now() the pass judged due times by) against the
 * due time its idempotency key names. `fired_at` is written at the end of the pass, after the
 * requests, so it would hide a firing early by less than the pass took; it still witnesses the
 * firings that started no request (skipped, queued, failed).
 */
const firingsEarly: Probe = {
  name: "schedule due times started before their time (database clock)",
  sql: `
SELECT w.idempotency_key AS key, w.created_at AS request_created_at, NULL::timestamptz AS fired_at FROM workflow w
WHERE w.idempotency_key LIKE 'schedule:%' AND w.created_at < substr(w.idempotency_key, length('schedule:') + 38)::timestamptz
UNION ALL
SELECT ${SCHEDULE_KEY}, NULL, f.fired_at FROM schedule_firing f WHERE f.request_id IS NULL AND f.fired_at < f.due_at`,
};

// ── Destination (invariant 6 and the destination's side of invariant 2) ───────────────────────
const destinationDuplicates: Probe = {
  name: "duplicate effects at fenced and idempotent destinations",
  sql: `
SELECT kind, resource, request_identity, count(*)::int AS effects FROM destination.effect
WHERE kind IN ('fenced', 'idempotent') AND request_identity IS NOT NULL
GROUP BY kind, resource, request_identity HAVING count(*) > 1`,
};
const destinationRegressions: Probe = {
  name: "fenced effects accepted under a term not newer than the previous",
  sql: `
SELECT resource, epoch, term, previous_epoch, previous_term FROM (
  SELECT resource, epoch, term, lag(epoch) OVER w AS previous_epoch, lag(term) OVER w AS previous_term
  FROM destination.effect WHERE kind = 'fenced' WINDOW w AS (PARTITION BY resource ORDER BY id)) t
WHERE previous_epoch IS NOT NULL AND (epoch, term) <= (previous_epoch, previous_term)`,
};

export async function checkInvariants(input: CheckInput): Promise<CheckOutcome> {
  const { engine, destination } = input;
  const ack = [...input.acknowledgedWorkflowIds];
  const q = (probe: Probe) => rows(engine, probe);
  const [
    open2, overlap, order, receipts, checkpoints, orphans, noDecision, dupDecision, early, rerun, noIdentity, identities,
    completion, unknown, opaqueTwice, opaqueNoReview, lost,
  ] = await Promise.all([
    q(twoOpenLeases), q(overlappingLeases), q(termsNotIncreasing), q(staleReceipts), q(staleCheckpoints), q(attemptsWithoutLease),
    q(expiriesWithoutDecision), q(duplicateDecisions), q(earlyExpiry), q(silentReruns), q(invocationsWithoutIdentity), q(identityChanged),
    q(completedWithoutOneReceipt), q(unknownOutsideReview), q(opaqueRetried), q(opaqueUnknownNotInReview),
    q({ ...unsettledWorkflows, params: [ack] }),
  ]);
  const [duplicates, regressions, staleTerm] = await Promise.all([
    rows(destination, destinationDuplicates),
    rows(destination, destinationRegressions),
    rows(destination, { name: "stale-term refusals", sql: `SELECT count(*)::int AS n FROM destination.incident WHERE what = 'stale_term'` }),
  ]);
  const [rejections] = await q({ name: "fencing rejections", sql: `SELECT count(*)::int AS n FROM fencing_rejection` });
  const [firedTwice, firedEarly, timerLost, consumedTwice, twiceForOneKey, missed, timedOutEarly] = await Promise.all([
    q(timersFiredTwice), q(timersFiredEarly), q(timersLost), q(eventsConsumedTwice), q(eventsTwiceForOneKey), q(eventsMissed), q(timeoutsEarly),
  ]);
  const [startedTwice, dueMissed, notLatest, firingEarly] = await Promise.all([q(dueTimesStartedTwice), q(dueTimesMissed), q(dueTimesNotLatest), q(firingsEarly)]);
  const [undoneWithoutEffect, undoneWithoutReceipt] = await Promise.all([q(undosWithoutEffect), q(countedUndoneWithoutReceipt)]);

  const verdict = (id: number, name: string, ...found: { probe: string; rows: unknown[] }[]): InvariantResult => {
    const failing = found.filter((f) => f.rows.length > 0);
    return {
      id,
      name,
      passed: failing.length === 0,
      violations: failing.reduce((sum, f) => sum + f.rows.length, 0),
      witnesses: failing.flatMap((f) => f.rows.slice(0, WITNESSES).map((row) => ({ check: f.probe, ...(row as object) }))),
    };
  };
  const invariants = [
    verdict(1, "at most one current lease per step",
      { probe: twoOpenLeases.name, rows: open2 }, { probe: overlappingLeases.name, rows: overlap }, { probe: termsNotIncreasing.name, rows: order }),
    verdict(2, "a stale term commits no checkpoint or receipt",
      { probe: staleReceipts.name, rows: receipts }, { probe: staleCheckpoints.name, rows: checkpoints },
      { probe: attemptsWithoutLease.name, rows: orphans }, { probe: destinationRegressions.name, rows: regressions }),
    verdict(3, "every expiry enters evidence-based recovery",
      { probe: expiriesWithoutDecision.name, rows: noDecision }, { probe: duplicateDecisions.name, rows: dupDecision },
      { probe: earlyExpiry.name, rows: early }, { probe: silentReruns.name, rows: rerun }),
    verdict(4, "a request identity exists before any invocation",
      { probe: invocationsWithoutIdentity.name, rows: noIdentity }, { probe: identityChanged.name, rows: identities }),
    verdict(5, "completed steps have exactly one receipt; invoked steps without one are unknown",
      { probe: completedWithoutOneReceipt.name, rows: completion }, { probe: unknownOutsideReview.name, rows: unknown }),
    verdict(6, "no duplicate effect at fenced and idempotent destinations", { probe: destinationDuplicates.name, rows: duplicates }),
    verdict(7, "opaque unknowns reach review and are never retried",
      { probe: opaqueRetried.name, rows: opaqueTwice }, { probe: opaqueUnknownNotInReview.name, rows: opaqueNoReview }),
    verdict(8, "nothing acknowledged is lost", { probe: unsettledWorkflows.name, rows: lost }),
    verdict(9, "a timer fires at most once, never early on the database clock, and is not lost",
      { probe: timersFiredTwice.name, rows: firedTwice }, { probe: timersFiredEarly.name, rows: firedEarly }, { probe: timersLost.name, rows: timerLost }),
    verdict(10, "an accepted event is consumed by at most one wait, and not lost",
      { probe: eventsConsumedTwice.name, rows: consumedTwice }, { probe: eventsTwiceForOneKey.name, rows: twiceForOneKey },
      { probe: eventsMissed.name, rows: missed }, { probe: timeoutsEarly.name, rows: timedOutEarly }),
    verdict(12, "an undo runs only for an effect with a receipt, and a request is undone only when every undo has its receipt",
      { probe: undosWithoutEffect.name, rows: undoneWithoutEffect }, { probe: countedUndoneWithoutReceipt.name, rows: undoneWithoutReceipt }),
    verdict(13, "a schedule's due time starts at most one request, never early, and none is missed within catch-up",
      { probe: dueTimesStartedTwice.name, rows: startedTwice }, { probe: dueTimesMissed.name, rows: dueMissed },
      { probe: dueTimesNotLatest.name, rows: notLatest }, { probe: firingsEarly.name, rows: firingEarly }),
  ];

  return {
    invariants,
    staleWritesRejected: Number(rejections?.n ?? 0) + Number(staleTerm[0]?.n ?? 0),
    staleWritesAccepted: receipts.length + checkpoints.length + regressions.length,
    duplicateEffects: duplicates.reduce((sum, row) => sum + Number(row.effects) - 1, 0),
    lostRequests: lost.length,
    unknownOutsideReview: unknown.length,
    detail: await describe(engine, destination),
  };
}

/** Figures for the reader (not verdicts): where steps ended, what recovery decided, what the destination saw. */
async function describe(engine: pg.Pool, destination: pg.Pool): Promise<Record<string, unknown>> {
  const grouped = async (pool: pg.Pool, sql: string) =>
    Object.fromEntries((await pool.query<{ k: string; n: number }>(sql)).rows.map((row) => [row.k, row.n]));
  const [stepStates, decisions, rejections, effects, incidents, reviews, lateObservations] = await Promise.all([
    grouped(engine, `SELECT state::text AS k, count(*)::int AS n FROM step GROUP BY 1 ORDER BY 1`),
    grouped(engine, `SELECT category::text AS k, count(*)::int AS n FROM recovery_decision GROUP BY 1 ORDER BY 1`),
    grouped(engine, `SELECT operation || ':' || reason AS k, count(*)::int AS n FROM fencing_rejection GROUP BY 1 ORDER BY 1`),
    grouped(destination, `SELECT kind AS k, count(*)::int AS n FROM destination.effect GROUP BY 1 ORDER BY 1`),
    grouped(destination, `SELECT what AS k, count(*)::int AS n FROM destination.incident GROUP BY 1 ORDER BY 1`),
    grouped(engine, `SELECT status::text AS k, count(*)::int AS n FROM review_case GROUP BY 1 ORDER BY 1`),
    grouped(engine, `SELECT 'late_observations' AS k, count(*)::int AS n FROM late_observation`),
  ]);
  // How many distinct processes made recovery decisions (the duplicate-recoverers cell wants several).
  const { rows: deciders } = await engine.query<{ n: number }>(`SELECT count(DISTINCT decided_by)::int AS n FROM recovery_decision`);
  // Timers and events (the waits cell): lateness is fired minus due, on the database clock.
  const { rows: waits } = await engine.query(`
    SELECT (SELECT count(*)::int FROM timer WHERE state = 'fired') AS "timersFired",
           (SELECT round((extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY settled_at - due_at)) * 1000)::numeric)::int FROM timer WHERE state = 'fired') AS "timerLatenessP50Ms",
           (SELECT round((extract(epoch FROM max(settled_at - due_at)) * 1000)::numeric)::int FROM timer WHERE state = 'fired') AS "timerLatenessMaxMs",
           (SELECT count(*)::int FROM event) AS "events",
           (SELECT count(*)::int FROM event WHERE consumed_at IS NOT NULL) AS "eventsConsumed",
           (SELECT count(*)::int FROM event_wait WHERE state = 'timed_out') AS "waitsTimedOut"`);
  return { ...(Number(waits[0]?.timersFired) + Number(waits[0]?.events) > 0 ? { waits: waits[0] } : {}), stepStates, recoveryDecisions: decisions, fencingRejections: rejections, reviewCases: reviews, destinationEffects: effects, destinationIncidents: incidents, ...lateObservations, recoverers: deciders[0]?.n ?? 0 };
}
