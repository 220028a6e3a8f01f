/**
 * Adapter permit statements. Capacity is counted in adapter_capacity.in_use and changed only in
 * the same statement that takes, releases or sweeps a permit, so the count and the permits agree.
 */
import type { NamedSql } from "../db";
import { FINAL_STEP_STATES, sqlList } from "../vocabulary";
import { RATE_MARGIN_MS } from "../permit-policy";
import { holdsAuthority } from "./authority";

const MS = "interval '1 millisecond'";

/**
 * How long a destination's call slot stays used after a call: a second, plus a margin for calls
 * that start late. A worker starts its call within CALL_START_WITHIN_MS of asking for the permit
 * (lib/engine/permit-policy.ts) or not at all, so two calls on one slot reach the destination
 * at least a second apart unless their trips there differ by more than the rest of the margin.
 */
export const RATE_WINDOW_MS = 1_000 + RATE_MARGIN_MS;

/** The furthest ahead a step refused a call slot is told to come back; beyond, they come back together. */
export const MAX_RATE_BOOKING_MS = 30_000;

/**
 * Takes a permit on ($4 adapter, $5 operation class) under limit $6 for the attempt that session
 * $1 holds on ($2 step, $3 term), valid for $7 ms, recording request identity $8. Guarded by the
 * authority guard (./authority.ts), and the lease row stays locked until commit, so a revoke
 * cannot slip in between; the upsert's WHERE re-checks in_use on the locked capacity row.
 *
 * A destination that declares a rate (adapter_rate) also needs a call slot: its rate row is
 * locked, so permits for it are decided one at a time on the database clock as of the lock
 * (clock_timestamp(), not the statement's start); the ring's next slot must not have been used
 * within RATE_WINDOW_MS, and the burst allowance (GCRA: at most `burst` at once, the rest
 * 1/per_second apart) must have come. The slot is taken only with the capacity, and both only
 * when both are free.
 *
 * Returns the permit, or, when it cannot be had now, a row without one whose wait_ms says when to
 * ask again and whose reason names what is missing. Rate: the refusal books the next moment not
 * yet promised to another waiting step (a slot's opening, then one window/per_second apart), so
 * the steps waiting for one destination come back spread out rather than all at once; a call
 * takes one booking back. Capacity: soon while some permit is active, as calls end quickly, else
 * when the earliest held permit runs out.
 * No row at all means the lease does not hold authority: a fenced write refused.
 */
export const acquirePermit: NamedSql = {
  name: "fl_acquire_permit",
  text: `
WITH authority AS (
  SELECT l.step_id, l.fencing_term, l.id AS attempt_id
  -- The attempt row carries the lease.
  FROM attempt l
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
  FOR SHARE OF l
),
rate AS (
  SELECT r.adapter, r.per_second, r.burst, r.calls, r.next_at, r.booked_until,
         ${RATE_WINDOW_MS} * ${MS} / r.per_second AS spacing
  FROM adapter_rate r
  WHERE r.adapter = $4 AND EXISTS (SELECT 1 FROM authority)
  FOR UPDATE OF r
),
call_slot AS (
  -- Locked too, so its latest use is read (the statement's snapshot may predate it), after the
  -- rate row's lock: whoever used it last held that lock and has committed.
  SELECT sl.adapter, sl.slot, sl.called_at
  FROM adapter_call_slot sl JOIN rate r ON sl.adapter = r.adapter AND sl.slot = r.calls % r.per_second
  FOR UPDATE OF sl
),
call AS (
  SELECT r.adapter, r.per_second, r.spacing, r.booked_until, sl.slot, clock_timestamp() AS at,
         greatest(sl.called_at + ${RATE_WINDOW_MS} * ${MS},
                  r.next_at - (r.burst - 1) * (1000.0 / r.per_second) * ${MS}) AS opens_at
  FROM rate r JOIN call_slot sl ON sl.adapter = r.adapter
),
capacity AS (
  INSERT INTO adapter_capacity (adapter, operation_class, in_use)
  SELECT $4, $5, 1 FROM authority WHERE $6::int > 0 AND NOT EXISTS (SELECT 1 FROM call WHERE opens_at > at)
  ON CONFLICT (adapter, operation_class) DO UPDATE
  SET in_use = adapter_capacity.in_use + 1
  WHERE adapter_capacity.in_use < $6::int
  RETURNING adapter
),
rate_taken AS (
  UPDATE adapter_rate r
  SET calls = r.calls + 1, next_at = greatest(r.next_at, c.at) + (1000.0 / c.per_second) * ${MS},
      booked_until = greatest(c.at, r.booked_until - c.spacing)
  FROM call c, capacity
  WHERE r.adapter = c.adapter
),
booked AS (
  UPDATE adapter_rate r
  SET booked_until = least(greatest(c.booked_until, c.opens_at) + c.spacing, c.at + ${MAX_RATE_BOOKING_MS} * ${MS})
  FROM call c
  WHERE r.adapter = c.adapter AND c.opens_at > c.at
  RETURNING r.booked_until - c.spacing AS ask_at, c.at
),
slot_taken AS (
  UPDATE adapter_call_slot sl
  SET called_at = c.at
  FROM call c, capacity
  WHERE sl.adapter = c.adapter AND sl.slot = c.slot
),
granted AS (
  INSERT INTO adapter_permit (adapter, operation_class, step_id, attempt_id, fencing_term, request_identity, expires_at)
  SELECT $4, $5, au.step_id, au.attempt_id, au.fencing_term, $8, now() + $7::int * ${MS}
  FROM authority au, capacity
  RETURNING id, expires_at
)
SELECT id, expires_at, NULL::int AS wait_ms, NULL::text AS reason, EXISTS (SELECT 1 FROM call) AS rated FROM granted
UNION ALL
SELECT NULL, NULL, greatest(0, ceil(extract(epoch FROM b.ask_at - b.at) * 1000))::int, 'rate', true
FROM booked b
UNION ALL
SELECT NULL, NULL,
       CASE WHEN bool_or(p.state = 'active') IS NOT FALSE THEN NULL
            ELSE greatest(0, ceil(extract(epoch FROM min(p.held_until) - now()) * 1000))::int END,
       'capacity', false
FROM authority au
LEFT JOIN adapter_permit p ON p.adapter = $4 AND p.operation_class = $5 AND p.state <> 'released'
WHERE NOT EXISTS (SELECT 1 FROM granted) AND NOT EXISTS (SELECT 1 FROM call WHERE opens_at > at)
GROUP BY au.step_id`,
};

/** Releases permit $1 if it still counts against capacity. */
export const releasePermit: NamedSql = {
  name: "fl_release_permit",
  text: `
WITH released AS (
  UPDATE adapter_permit
  SET state = 'released', released_at = now()
  WHERE id = $1 AND state <> 'released'
  RETURNING adapter, operation_class
)
UPDATE adapter_capacity c
SET in_use = c.in_use - 1
FROM released r
WHERE c.adapter = r.adapter AND c.operation_class = r.operation_class
RETURNING c.adapter`,
};

/**
 * Keeps permit $1 counted after its call ended with an unknown outcome ($2 why): the request may
 * still be running at the destination. It is released when the step's outcome is settled, or at
 * the latest after $3 ms, when no call can still be running.
 */
export const holdPermit: NamedSql = {
  name: "fl_hold_permit",
  text: `
UPDATE adapter_permit
SET state = 'held', held_reason = $2, held_until = now() + $3::int * ${MS}
WHERE id = $1 AND state = 'active'
RETURNING id`,
};

/**
 * Settles permits whose holder is gone or whose reason to be held has passed, in one statement:
 *  - an expired active permit whose attempt began an invocation that was never answered is held
 *    for $1 times its own lifetime past its expiry; any other expired active permit is released;
 *  - a held permit is released once its step has a receipt or has ended, or its hold ran out.
 * Returns the permits it changed and their new state.
 */
export const sweepPermits: NamedSql = {
  name: "fl_sweep_permits",
  text: `
WITH candidate AS (
  SELECT p.id, p.adapter, p.operation_class,
         CASE
           WHEN p.state = 'active' AND a.invocation_began_at IS NOT NULL AND a.observed_effect IS NULL
                AND r.id IS NULL AND p.expires_at + $1::int * (p.expires_at - p.acquired_at) > now()
             THEN 'held'::permit_state
           ELSE 'released'::permit_state
         END AS next_state
  FROM adapter_permit p
  JOIN attempt a ON a.id = p.attempt_id
  JOIN step s ON s.id = p.step_id
  LEFT JOIN receipt r ON r.step_id = p.step_id
  WHERE (p.state = 'active' AND p.expires_at <= now())
     OR (p.state = 'held' AND (r.id IS NOT NULL OR p.held_until <= now()
                               OR s.state IN (${sqlList(FINAL_STEP_STATES)})))
  ORDER BY p.expires_at
  LIMIT $2
  FOR UPDATE OF p SKIP LOCKED
),
changed AS (
  UPDATE adapter_permit p
  SET state = c.next_state,
      released_at = CASE WHEN c.next_state = 'released' THEN now() END,
      held_until = CASE WHEN c.next_state = 'held' THEN p.expires_at + $1::int * (p.expires_at - p.acquired_at) ELSE p.held_until END,
      held_reason = CASE WHEN c.next_state = 'held' THEN 'holder gone while its call was unanswered' ELSE p.held_reason END
  FROM candidate c
  WHERE p.id = c.id AND p.state <> c.next_state
  RETURNING p.id, p.adapter, p.operation_class, p.state
),
counted AS (
  UPDATE adapter_capacity ac
  SET in_use = ac.in_use - x.n
  FROM (SELECT adapter, operation_class, count(*)::int AS n FROM changed WHERE state = 'released' GROUP BY 1, 2) x
  WHERE ac.adapter = x.adapter AND ac.operation_class = x.operation_class
)
SELECT id, state FROM changed`,
};
