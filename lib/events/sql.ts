/**
 * The event room's statements. An event and a wait meet under one advisory lock per (name, key),
 * taken by whoever arrives (a send, or a wait being armed), so one always sees the other: an event
 * sent while a wait is being armed is either consumed by it or found by it. A wait is settled once:
 * `waiting` → `received` (by an event), `timed_out` (by a keeper), or `cancelled` (with its step,
 * by the trigger `event_wait_ends_with_its_step`), each guarded by `state = 'waiting'`.
 */
import type { NamedSql } from "@/lib/engine/db";
import { stepsReadyNotifiedAfterCommit, waitingStepsSettled } from "@/lib/engine/waits";

/** Serialises the meeting of events and waits for ($1 name, $2 key) until the transaction ends. */
export const lockCorrelation: NamedSql = {
  name: "fl_lock_event_correlation",
  text: `SELECT pg_advisory_xact_lock(hashtextextended('fenceline event ' || $1 || chr(31) || $2, 0))`,
};

/**
 * A send's first statement: takes lockCorrelation's lock for ($1 name, $2 key), and reads what the
 * registered steps that wait for event $1 say of it: whether any does, how long an early event is
 * kept for them (the longest any asks), and their payload schemas. One round trip where a send
 * took two; what it reads needs no lock, and the payload is checked before anything is written.
 * The transaction's step-ready notification waits for its commit (stepsReadyNotifiedAfterCommit):
 * one transaction per event, sends would otherwise commit one WAL flush at a time.
 */
export const lockCorrelationAndReadRegistration: NamedSql = {
  name: "fl_lock_event_correlation_and_read_registration",
  text: `
SELECT count(s.step) > 0 AS known,
       max((s.step->'wait'->>'keepEarlyEventsMs')::bigint) AS keep_ms,
       coalesce(jsonb_agg(DISTINCT s.step->'wait'->'payloadSchema') FILTER (WHERE s.step->'wait' ? 'payloadSchema'), '[]') AS schemas
FROM (SELECT pg_advisory_xact_lock(hashtextextended('fenceline event ' || $1 || chr(31) || $2, 0)), ${stepsReadyNotifiedAfterCommit}) AS locked
LEFT JOIN (workflow_definition d CROSS JOIN LATERAL jsonb_array_elements(d.steps) AS s(step))
  ON s.step->'wait'->>'room' = 'event' AND s.step->'wait'->>'name' = $1`,
};

/**
 * Records event ($1 name, $2 key, $3 payload, $4 its digest) from $5 sender with idempotency key
 * $6, kept $7 ms for a wait that begins later. A repeated key returns nothing: the caller reads
 * the event it named (eventByIdempotencyKey).
 */
export const insertEvent: NamedSql = {
  name: "fl_insert_event",
  text: `
INSERT INTO event (name, correlation_key, payload, payload_digest, sender, idempotency_key, keep_until)
VALUES ($1, $2, $3, $4, $5, $6, now() + $7::bigint * interval '1 millisecond')
ON CONFLICT (sender, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING id, received_at, keep_until`,
};

/** The event $2 sent by $1 under that idempotency key, with the wait that consumed it. */
export const eventByIdempotencyKey: NamedSql = {
  name: "fl_event_by_idempotency_key",
  text: `
SELECT e.id, e.name, e.correlation_key, e.payload_digest, e.received_at, e.keep_until, e.consumed_at,
       s.workflow_id AS consumed_by_request, s.name AS consumed_by_step
FROM event e LEFT JOIN step s ON s.id = e.consumed_by_step_id
WHERE e.sender = $1 AND e.idempotency_key = $2`,
};

/**
 * What follows a wait's move to `received` (CTE `received`: step_id, event_id): event `event` (a
 * parameter, so it is found by its primary key whatever the statistics say) is consumed by it, and
 * the step settles with the event as its result and its id as the receipt's reference (the waits
 * seam, lib/engine/waits.ts). CTE `settled` holds each received wait with the step it settled;
 * none would mean the room and the step disagree, which the caller treats as a programmer error.
 */
const consumedAndSettled = (event: string): string => `
consumed AS (
  UPDATE event e SET consumed_by_step_id = r.step_id, consumed_at = now()
  FROM received r
  WHERE e.id = ${event} AND r.event_id = e.id AND e.consumed_at IS NULL
  RETURNING r.step_id, e.id::text AS external_reference, 'event_received'::verification_method AS verification_method,
            jsonb_build_object('received', true, 'payload', e.payload, 'eventId', e.id,
                               'receivedAt', to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS observed_result
),
${waitingStepsSettled("consumed", "ARRAY(SELECT step_id FROM consumed)")},
settled AS (
  SELECT r.step_id AS received_step_id, x.step_id AS settled_step_id, s.workflow_id, s.name AS step_name, w.trace_parent
  FROM received r
  LEFT JOIN written x ON x.step_id = r.step_id
  LEFT JOIN step s ON s.id = x.step_id
  LEFT JOIN workflow w ON w.id = s.workflow_id
)`;

/**
 * Event $3, just recorded for ($1 name, $2 key), goes to the oldest wait for them still waiting,
 * in one statement: the wait's request row is taken first (the order a cancel takes it in, so the
 * two queue one behind the other), then the wait moves `waiting` → `received` under its guard, the
 * event is consumed and the step settled. The guard is what keeps it at most once: the statement's
 * snapshot predates the request lock, but a cancel or a timeout that committed meanwhile moved the
 * wait out of `waiting`, and the update rechecks the row as it is now. No row when no wait waits;
 * a row with no received step when the oldest was taken meanwhile (the caller asks for the next).
 */
export const deliverToOldestWait: NamedSql = {
  name: "fl_deliver_event_to_oldest_wait",
  text: `
WITH oldest AS (
  SELECT step_id, workflow_id FROM event_wait
  WHERE name = $1 AND correlation_key = $2 AND state = 'waiting'
  ORDER BY armed_at, step_id
  LIMIT 1
),
request AS (
  SELECT w.id FROM workflow w JOIN oldest o ON o.workflow_id = w.id FOR UPDATE OF w
),
received AS (
  UPDATE event_wait e SET state = 'received', event_id = $3, settled_at = now()
  FROM oldest o JOIN request q ON q.id = o.workflow_id
  WHERE e.step_id = o.step_id AND e.state = 'waiting'
  RETURNING e.step_id, e.event_id
),
${consumedAndSettled("$3::uuid")}
SELECT o.step_id AS tried_step_id, x.received_step_id, x.settled_step_id, x.workflow_id, x.step_name, x.trace_parent
FROM oldest o LEFT JOIN settled x ON x.received_step_id = o.step_id`,
};

/** Takes request $1's row, the order a cancel takes it in, so a cancel and a settlement of its wait queue one behind the other. */
export const lockRequest: NamedSql = {
  name: "fl_event_lock_request",
  text: `SELECT id FROM workflow WHERE id = $1 FOR UPDATE`,
};

/**
 * Wait of step $1 receives event $2, if it still waits (and, with $3, only through that one-time
 * URL token); the event is consumed and the step settled, in one statement (consumedAndSettled).
 * The caller holds the step's request row. No row when the wait no longer waits.
 */
export const receiveEvent: NamedSql = {
  name: "fl_receive_event",
  text: `
WITH received AS (
  UPDATE event_wait SET state = 'received', event_id = $2, settled_at = now()
  WHERE step_id = $1 AND state = 'waiting' AND ($3::text IS NULL OR url_token = $3)
  RETURNING step_id, event_id
),
${consumedAndSettled("$2::uuid")}
SELECT received_step_id, settled_step_id, workflow_id, step_name, trace_parent FROM settled`,
};

/**
 * Arms the event wait of parked step $1 (request $2): for event $3 with key $4, timing out $5 ms
 * from now (never when null) with policy $6, with one-time URL token $7 when the step asked for one.
 */
export const armEventWait: NamedSql = {
  name: "fl_arm_event_wait",
  text: `
INSERT INTO event_wait (step_id, workflow_id, name, correlation_key, timeout_at, on_timeout, url_token)
VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond', $6, $7)
RETURNING timeout_at`,
};

/** The oldest event for ($1 name, $2 key) that no wait has taken and that is still kept. */
export const oldestUnconsumedEvent: NamedSql = {
  name: "fl_oldest_unconsumed_event",
  text: `
SELECT id FROM event
WHERE name = $1 AND correlation_key = $2 AND consumed_at IS NULL AND keep_until > now()
ORDER BY received_at, id
LIMIT 1`,
};

/** The wait a one-time URL token $1 names, with whether it still waits. */
export const waitByUrlToken: NamedSql = {
  name: "fl_event_wait_by_url_token",
  text: `SELECT step_id, workflow_id, name, correlation_key, state FROM event_wait WHERE url_token = $1`,
};

/**
 * Times out up to $1 waits whose timeout has passed on the database clock, earliest first. Takes
 * each wait's row, then its request's, skipping what others hold: a send holding the request
 * settles the wait first, and the timeout then finds it settled.
 */
export const timeOutDueWaits: NamedSql = {
  name: "fl_time_out_due_event_waits",
  text: `
WITH due AS (
  SELECT step_id, workflow_id FROM event_wait
  WHERE state = 'waiting' AND timeout_at <= now()
  ORDER BY timeout_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
),
request AS (
  SELECT w.id FROM workflow w WHERE w.id IN (SELECT workflow_id FROM due) FOR UPDATE OF w SKIP LOCKED
)
UPDATE event_wait e SET state = 'timed_out', settled_at = now()
FROM due d JOIN request r ON r.id = d.workflow_id
WHERE e.step_id = d.step_id AND e.state = 'waiting'
RETURNING e.step_id, e.name, e.correlation_key, e.on_timeout, e.settled_at`,
};

/** Milliseconds from now until the earliest wait times out, on the database clock; null when none can. */
export const nextTimeout: NamedSql = {
  name: "fl_next_event_wait_timeout",
  text: `SELECT (extract(epoch FROM (min(timeout_at) - now())) * 1000)::float8 AS in_ms FROM event_wait WHERE state = 'waiting' AND timeout_at IS NOT NULL`,
};
