/**
 * Epoch transition statements. A transition row in progress stops every claim (see
 * claimReadySteps); its state moves stopping → reconciling → installing → completed | blocked.
 */
import type { NamedSql } from "../db";

/** Opens a transition from the current epoch ($1 reason, $2 requested by); none if one is open. */
export const beginTransition: NamedSql = {
  name: "fl_begin_epoch_transition",
  text: `
INSERT INTO epoch_transition (from_epoch, reason, requested_by)
VALUES (fl_current_epoch(), $1, $2)
ON CONFLICT DO NOTHING
RETURNING id, from_epoch`,
};

/** Moves transition $1 to state $2 (only forward, only while it is open). */
export const advanceTransition: NamedSql = {
  name: "fl_advance_epoch_transition",
  text: `
UPDATE epoch_transition SET state = $2
WHERE id = $1 AND finished_at IS NULL
RETURNING id`,
};

/** Leases still open (in-flight attempts): the reconcile step waits for these to end. */
export const openLeases: NamedSql = {
  name: "fl_open_leases",
  text: `SELECT step_id, fencing_term FROM lease WHERE ended_at IS NULL ORDER BY expires_at LIMIT $1`,
};

/**
 * Opens epoch $2 for transition $1: one more than any epoch the database or a destination has
 * seen ($2 is computed by the caller from both). Epoch ids are never reused: the insert fails if
 * $2 is not above every existing one.
 */
export const openEpoch: NamedSql = {
  name: "fl_open_epoch",
  text: `
WITH opened AS (
  INSERT INTO epoch (id, reason)
  SELECT $2::bigint, 'transition ' || t.id || ': ' || t.reason
  FROM epoch_transition t
  WHERE t.id = $1::bigint AND t.finished_at IS NULL AND $2::bigint > (SELECT max(id) FROM epoch)
  RETURNING id
)
UPDATE epoch_transition t SET to_epoch = o.id, state = 'installing'
FROM opened o
WHERE t.id = $1::bigint
RETURNING t.to_epoch`,
};

/**
 * Finishes transition $1 with per-destination results $2 (jsonb). Destinations in $3 failed
 * their installation and stay blocked at epoch $4; destinations in $5 took it and are unblocked.
 */
export const finishTransition: NamedSql = {
  name: "fl_finish_epoch_transition",
  text: `
WITH blocked AS (
  INSERT INTO destination_block (adapter, epoch, reason)
  SELECT adapter, $4::bigint, 'epoch ' || $4::bigint || ' not installed: ' || ($2::jsonb -> adapter ->> 'error')
  FROM unnest($3::text[]) AS b(adapter)
  ON CONFLICT (adapter) DO UPDATE SET epoch = excluded.epoch, reason = excluded.reason, since = now()
),
unblocked AS (
  DELETE FROM destination_block WHERE adapter = ANY($5::text[])
)
UPDATE epoch_transition
SET destinations = $2, finished_at = now(),
    state = CASE WHEN cardinality($3::text[]) > 0 THEN 'blocked' ELSE 'completed' END
WHERE id = $1 AND finished_at IS NULL
RETURNING state`,
};

/** Ends transition $1 as failed ($2 why) so claims resume under the old epoch. */
export const abandonTransition: NamedSql = {
  name: "fl_abandon_epoch_transition",
  text: `
UPDATE epoch_transition
SET state = 'failed', finished_at = now(), destinations = destinations || jsonb_build_object('error', $2::text)
WHERE id = $1 AND finished_at IS NULL`,
};

/** The current epoch, any transition in progress, and the destinations left blocked. */
export const epochStatus: NamedSql = {
  name: "fl_epoch_status",
  text: `
SELECT fl_current_epoch()::text AS epoch,
       (SELECT jsonb_build_object('id', t.id::text, 'state', t.state, 'reason', t.reason, 'startedAt', t.started_at)
          FROM epoch_transition t WHERE t.finished_at IS NULL) AS transition,
       coalesce((SELECT jsonb_agg(jsonb_build_object('adapter', b.adapter, 'epoch', b.epoch::text, 'reason', b.reason, 'since', b.since) ORDER BY b.adapter)
          FROM destination_block b), '[]'::jsonb) AS blocked`,
};
