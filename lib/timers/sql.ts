/**
 * The timer room's statements. A timer is `waiting` until the database clock passes its due time;
 * then one keeper fires it (`fired`), or its step ends first (`cancelled`, by the trigger
 * `timer_ends_with_its_step`). Every transition is guarded by `state = 'waiting'`.
 */
import type { NamedSql } from "@/lib/engine/db";

/**
 * Arms the timer of parked step $1 (request $2): due at $3, or $5 ms after $4 (when the step
 * became ready); $6 what the step asked for. Returns the instant it resolved to.
 */
export const armTimer: NamedSql = {
  name: "fl_arm_timer",
  text: `
INSERT INTO timer (step_id, workflow_id, due_at, requested)
VALUES ($1, $2, coalesce($3::timestamptz, $4::timestamptz + $5::bigint * interval '1 millisecond'), $6)
RETURNING due_at`,
};

/**
 * Fires up to $1 timers whose time has come on the database clock, earliest first. Takes each
 * timer's row, then its request's row, both skipping what another keeper holds: a keeper never
 * waits here, and a request being cancelled (which takes the request's row first) is left alone.
 * Both rows are locked in one scan, and the update finds each timer by its primary key: the
 * statistics of timers armed in the future estimate one due row, and a join of the due timers
 * with their requests was planned as a nested loop over both lists (500 × 500 rows, 400 ms a pass).
 */
export const fireDueTimers: NamedSql = {
  name: "fl_fire_due_timers",
  text: `
WITH due AS (
  SELECT t.step_id FROM timer t JOIN workflow w ON w.id = t.workflow_id
  WHERE t.state = 'waiting' AND t.due_at <= now()
  ORDER BY t.due_at
  LIMIT $1
  FOR UPDATE OF t, w SKIP LOCKED
)
UPDATE timer t SET state = 'fired', settled_at = now()
WHERE t.step_id = ANY(ARRAY(SELECT step_id FROM due)) AND t.state = 'waiting'
RETURNING t.step_id, t.due_at, t.settled_at AS fired_at`,
};

/** Milliseconds from now until the earliest waiting timer is due, on the database clock; null when none waits. */
export const nextTimerDue: NamedSql = {
  name: "fl_next_timer_due",
  text: `SELECT (extract(epoch FROM (min(due_at) - now())) * 1000)::float8 AS in_ms FROM timer WHERE state = 'waiting'`,
};
