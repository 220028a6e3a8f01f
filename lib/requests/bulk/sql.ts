/** The named SQL of bulk actions on requests: the filter, the snapshot, the runner's lease and each item's end. */
import type { NamedSql } from "@/lib/engine/db";
import { endedWithReason } from "../reason-filter";

/**
 * The requests filter $1 status, $2 kind, $3 created from, $4 created before, $5 app (requester),
 * $6 error reason (a part of the status reason, case-insensitive) match, for alias w.
 */
const MATCHES = `
      ($1::workflow_status IS NULL OR w.status = $1)
  AND ($2::text IS NULL OR w.kind = $2)
  AND ($3::timestamptz IS NULL OR w.created_at >= $3)
  AND ($4::timestamptz IS NULL OR w.created_at < $4)
  AND ($5::text IS NULL OR w.requester = $5)
  AND ${endedWithReason("$6", "w")}`;

/** How many requests match (counted up to $7), and the first $8 of them, newest first. */
export const previewMatches: NamedSql = {
  name: "fl_bulk_preview",
  text: `
SELECT (SELECT count(*)::int FROM (SELECT 1 FROM workflow w WHERE ${MATCHES} LIMIT $7) capped) AS total,
       (SELECT coalesce(json_agg(json_build_object('id', s.id, 'kind', s.kind, 'status', s.status, 'statusReason', s.status_reason,
                                                   'requester', s.requester, 'createdAt', s.created_at) ORDER BY s.created_at DESC, s.id DESC), '[]'::json)
        FROM (SELECT w.id, w.kind, w.status, w.status_reason, w.requester, w.created_at FROM workflow w WHERE ${MATCHES}
              ORDER BY w.created_at DESC, w.id DESC LIMIT $8) s) AS sample`,
};

/**
 * Starts a bulk action ($9 action, $10 filter, $11 reason, $12 who, $13 client key) over the
 * requests the filter matches, newest first, when they are exactly $7 (the count the operator
 * previewed; at most $7 are looked at, so more would not match either). The same client key
 * again returns the action it started. Returns the action's id and whether it is new.
 */
export const startBulkAction: NamedSql = {
  name: "fl_bulk_start",
  text: `
WITH matched AS (
  SELECT w.id, row_number() OVER (ORDER BY w.created_at DESC, w.id DESC)::int AS position
  FROM (SELECT w.id, w.created_at FROM workflow w WHERE ${MATCHES} ORDER BY w.created_at DESC, w.id DESC LIMIT $7 + 1) w
),
earlier AS (
  SELECT id FROM bulk_action WHERE requested_by = $11 AND client_key = $12
),
started AS (
  INSERT INTO bulk_action (action, filter, reason, requested_by, client_key, total)
  SELECT $8, $9::jsonb, $10, $11, $12, $7
  WHERE NOT EXISTS (SELECT 1 FROM earlier) AND (SELECT count(*) FROM matched) = $7
  ON CONFLICT (requested_by, client_key) DO NOTHING
  RETURNING id
),
items AS (
  INSERT INTO bulk_action_item (bulk_id, workflow_id, position)
  SELECT s.id, m.id, m.position FROM started s CROSS JOIN matched m
)
SELECT id, true AS created, (SELECT count(*)::int FROM matched) AS matched FROM started
UNION ALL
SELECT id, false, (SELECT count(*)::int FROM matched) FROM earlier`,
};

/** Takes the runner's lease of running action $1 for $2 ms, when no live runner holds it. */
export const takeRunner: NamedSql = {
  name: "fl_bulk_take_runner",
  text: `
UPDATE bulk_action SET runner_until = now() + $2 * interval '1 millisecond'
WHERE id = $1 AND state = 'running' AND (runner_until IS NULL OR runner_until < now())
RETURNING id, action, reason, requested_by`,
};

/** The next $2 pending items of action $1, in order; renews the runner's lease for $3 ms. */
export const nextItems: NamedSql = {
  name: "fl_bulk_next_items",
  text: `
WITH renewed AS (UPDATE bulk_action SET runner_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND state = 'running')
SELECT workflow_id FROM bulk_action_item WHERE bulk_id = $1 AND state = 'pending' ORDER BY position LIMIT $2`,
};

/** Ends item ($1 action, $2 request) as $3 (done or skipped) with $4 why, if it is still pending. */
export const endItem: NamedSql = {
  name: "fl_bulk_end_item",
  text: `
UPDATE bulk_action_item SET state = $3, detail = $4, done_at = now()
WHERE bulk_id = $1 AND workflow_id = $2 AND state = 'pending'
RETURNING workflow_id`,
};

/** Finishes action $1 once no item is pending. */
export const finish: NamedSql = {
  name: "fl_bulk_finish",
  text: `
UPDATE bulk_action SET state = 'finished', finished_at = now(), runner_until = NULL
WHERE id = $1 AND state = 'running' AND NOT EXISTS (SELECT 1 FROM bulk_action_item i WHERE i.bulk_id = $1 AND i.state = 'pending')
RETURNING id`,
};

/** Action $1 with its counts by state and up to $2 skipped items with why. */
export const readProgress: NamedSql = {
  name: "fl_bulk_progress",
  text: `
SELECT b.id, b.action, b.filter, b.reason, b.requested_by, b.total, b.state, b.created_at, b.finished_at,
       b.runner_until IS NOT NULL AND b.runner_until > now() AS runner_alive,
       (SELECT count(*)::int FROM bulk_action_item i WHERE i.bulk_id = b.id AND i.state = 'done') AS done,
       (SELECT count(*)::int FROM bulk_action_item i WHERE i.bulk_id = b.id AND i.state = 'skipped') AS skipped,
       (SELECT count(*)::int FROM bulk_action_item i WHERE i.bulk_id = b.id AND i.state = 'pending') AS pending,
       (SELECT coalesce(json_agg(json_build_object('requestId', s.workflow_id, 'why', s.detail) ORDER BY s.position), '[]'::json)
        FROM (SELECT workflow_id, detail, position FROM bulk_action_item i WHERE i.bulk_id = b.id AND i.state = 'skipped' ORDER BY position LIMIT $2) s) AS skipped_items
FROM bulk_action b WHERE b.id = $1`,
};
