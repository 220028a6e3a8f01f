/**
 * The schedule room's statements. A schedule is `active` (the keepers fire it at `next_due_at`)
 * or `paused` (nothing due). Each due time a keeper reaches becomes one schedule_firing row:
 *
 *   (due) ──▶ started   its request created in the same transaction
 *         ──▶ skipped   overlap `skip` (or `queue_one` with one already queued) while the previous request runs
 *         ──▶ queued ──▶ started   overlap `queue_one`: started once the previous request has ended
 *         ──▶ failed    the pinned kind's version is not registered, or the input no longer fits it
 *
 * The keepers take due schedules' rows with SKIP LOCKED, so each schedule is fired by one keeper
 * at a time; the firing's primary key (schedule_id, due_at) and the request's idempotency key,
 * both derived from the due time, make a second firing of the same due time write nothing.
 */
import type { NamedSql } from "@/lib/engine/db";

const SCHEDULE_COLUMNS = `s.id, s.name, s.owner, s.kind, s.version, s.input, s.due_time_field, s.cron, s.time_zone, s.dst_gap,
  s.overlap, s.catch_up, s.catch_up_limit, s.state, s.next_due_at, s.last_due_at, s.queued_due_at, s.missed::int AS missed,
  s.created_by, s.created_at, s.updated_at`;

/** Whether a request this schedule started is still active (the overlap policies ask). */
const RUNNING = `EXISTS (SELECT 1 FROM schedule_firing f JOIN workflow w ON w.id = f.request_id
                 WHERE f.schedule_id = s.id AND f.state = 'started' AND w.status = 'active')`;

/**
 * Takes up to $1 active schedules that have work now, on the database clock: a due time reached,
 * or a queued firing whose previous request has ended. Skips rows another keeper holds; returns
 * each with whether its previous request still runs, and the database's now.
 */
export const takeDueSchedules: NamedSql = {
  name: "fl_take_due_schedules",
  text: `
WITH due AS (
  SELECT s.id FROM schedule s
  WHERE s.state = 'active' AND s.next_due_at <= now()
  UNION
  SELECT s.id FROM schedule s
  WHERE s.queued_due_at IS NOT NULL AND s.state = 'active' AND NOT ${RUNNING}
),
taken AS (
  -- Locked rows are read as the keeper that held them left them, and rechecked: a due time it
  -- fired meanwhile is no longer due here. The columns come from the locked row, not from this
  -- statement's snapshot, which would still show that due time.
  SELECT ${SCHEDULE_COLUMNS} FROM schedule s
  WHERE s.id IN (SELECT id FROM due) AND s.state = 'active' AND (s.next_due_at <= now() OR s.queued_due_at IS NOT NULL)
  ORDER BY least(s.next_due_at, s.queued_due_at)
  LIMIT $1
  FOR UPDATE OF s SKIP LOCKED
)
SELECT s.*, ${RUNNING} AS running, now() AS db_now
FROM taken s`,
};

/**
 * Records firings: per element, schedule $1 due at $2 in state $3, with request $4 and reason $5.
 * A due time already recorded keeps its row (ON CONFLICT DO NOTHING); returns the rows written.
 * `fired_at` is the statement's clock, near the pass's commit (its requests are written by then),
 * not the transaction's start: lateness counts the whole pass.
 */
export const recordFirings: NamedSql = {
  name: "fl_record_schedule_firings",
  text: `
INSERT INTO schedule_firing (schedule_id, due_at, state, request_id, reason, fired_at)
SELECT *, clock_timestamp() FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::uuid[], $5::text[])
ON CONFLICT (schedule_id, due_at) DO NOTHING
RETURNING schedule_id, due_at, state, request_id`,
};

/** Starts queued firing ($1, $2) with request $3, or ends it failed ($4 its reason) when $3 is null; guarded by state = 'queued'. */
export const releaseQueuedFiring: NamedSql = {
  name: "fl_release_queued_schedule_firing",
  text: `
UPDATE schedule_firing SET state = CASE WHEN $3::uuid IS NULL THEN 'failed' ELSE 'started' END,
       request_id = $3::uuid, reason = $4::text, fired_at = clock_timestamp()
WHERE schedule_id = $1 AND due_at = $2 AND state = 'queued'
RETURNING schedule_id`,
};

/**
 * Moves each schedule on after a pass: per element, schedule $1 whose next due time was $2 now
 * has next due time $3, last due time $4, queued firing $5, and $6 more missed due times. Guarded
 * by the next due time the pass read, so a pass acting on a stale reading changes nothing.
 */
export const advanceSchedules: NamedSql = {
  name: "fl_advance_schedules",
  text: `
UPDATE schedule s SET next_due_at = a.next_due_at, last_due_at = a.last_due_at, queued_due_at = a.queued_due_at,
       missed = s.missed + a.missed
FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::int[])
  AS a(id, read_due_at, next_due_at, last_due_at, queued_due_at, missed)
WHERE s.id = a.id AND s.state = 'active' AND s.next_due_at IS NOT DISTINCT FROM a.read_due_at
RETURNING s.id`,
};

/** Milliseconds until the earliest active schedule is due on the database clock (≤ 0: due now; 0 when a queued firing may start); null when none is. */
export const nextScheduleDue: NamedSql = {
  name: "fl_next_schedule_due",
  text: `
SELECT CASE WHEN EXISTS (SELECT 1 FROM schedule s WHERE s.queued_due_at IS NOT NULL AND s.state = 'active' AND NOT ${RUNNING}) THEN 0::float8
            ELSE (extract(epoch FROM ((SELECT min(next_due_at) FROM schedule WHERE state = 'active') - now())) * 1000)::float8 END AS in_ms`,
};

// ---- managing schedules ---------------------------------------------------------------------

export const scheduleColumns = SCHEDULE_COLUMNS;

/**
 * Creates schedule $1 (owner $2; kind $3 @ $4; input $5, due-time field $6; cron $7 in zone $8,
 * gap policy $9; overlap $10; catch-up $11 up to $12; by $13), first due at $14. A name already
 * taken writes nothing and returns no row.
 */
export const insertSchedule: NamedSql = {
  name: "fl_insert_schedule",
  text: `
INSERT INTO schedule AS s (name, owner, kind, version, input, due_time_field, cron, time_zone, dst_gap, overlap, catch_up,
                           catch_up_limit, created_by, next_due_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (name) DO NOTHING
RETURNING ${SCHEDULE_COLUMNS}`,
};

/** Schedule named $1, locked for a change. */
export const lockScheduleByName: NamedSql = {
  name: "fl_lock_schedule_by_name",
  text: `SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedule s WHERE s.name = $1 FOR UPDATE`,
};

/** Pauses schedule $1: nothing is due and a queued firing is dropped (marked skipped). Guarded by state = 'active'. */
export const pauseSchedule: NamedSql = {
  name: "fl_pause_schedule",
  text: `
WITH paused AS (
  UPDATE schedule SET state = 'paused', next_due_at = NULL, queued_due_at = NULL, updated_at = now()
  WHERE id = $1 AND state = 'active'
  RETURNING id
), dropped AS (
  UPDATE schedule_firing SET state = 'skipped', reason = 'the schedule was paused'
  WHERE schedule_id IN (SELECT id FROM paused) AND state = 'queued'
)
SELECT id FROM paused`,
};

/** Resumes schedule $1, next due at $2 (computed from now: what fell due while paused is not caught up). Guarded by state = 'paused'. */
export const resumeSchedule: NamedSql = {
  name: "fl_resume_schedule",
  text: `
UPDATE schedule SET state = 'active', next_due_at = $2, updated_at = now()
WHERE id = $1 AND state = 'paused'
RETURNING id`,
};

/** Deletes schedule $1 with its firings (the requests it started stay). */
export const deleteSchedule: NamedSql = {
  name: "fl_delete_schedule",
  text: `DELETE FROM schedule WHERE id = $1 RETURNING id`,
};

/** Schedules, by name, of owner $1 (every owner when null), after name $2, at most $3. */
export const listSchedules: NamedSql = {
  name: "fl_list_schedules",
  text: `
SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedule s
WHERE ($1::text IS NULL OR s.owner = $1) AND ($2::text IS NULL OR s.name > $2)
ORDER BY s.name
LIMIT $3`,
};

/** Schedule named $1 (of owner $2 unless null). */
export const scheduleByName: NamedSql = {
  name: "fl_schedule_by_name",
  text: `SELECT ${SCHEDULE_COLUMNS}, now() AS db_now FROM schedule s WHERE s.name = $1 AND ($2::text IS NULL OR s.owner = $2)`,
};

/** The last $2 firings of schedules $1, latest first per schedule, each with its request's status. */
export const recentFirings: NamedSql = {
  name: "fl_recent_schedule_firings",
  text: `
SELECT f.schedule_id, f.due_at, f.state, f.request_id, f.reason, f.fired_at, w.status AS request_status
FROM unnest($1::uuid[]) AS x(id)
CROSS JOIN LATERAL (
  SELECT * FROM schedule_firing f WHERE f.schedule_id = x.id ORDER BY f.due_at DESC LIMIT $2
) f
LEFT JOIN workflow w ON w.id = f.request_id
ORDER BY f.schedule_id, f.due_at DESC`,
};
