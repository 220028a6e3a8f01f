/**
 * Admission under a kind's limit on steps in flight per concurrency key (the triggers and
 * functions of migration 20261207100000_fair_share do the admitting as steps change state).
 */
import type { NamedSql } from "../db";

/**
 * Admits steps queued behind keys that have room, for up to $2 keys after key $1 in key order,
 * at most $3 steps per key and kind. A step is queued while its key had no free slot; the step
 * that frees one admits the next, but a step queued by a statement still running then is not yet
 * visible to it, and a raised or removed limit frees room without any step ending: this finds
 * them. The kinds of a key are read from its first 100 queued steps. Returns each key and kind
 * looked at, with how many steps it admitted.
 */
export const admitQueuedSteps: NamedSql = {
  name: "fl_admit_queued_steps",
  text: `
WITH RECURSIVE queued_key(key) AS (
  (SELECT s.concurrency_key FROM step s
   WHERE s.state = 'ready' AND s.next_eligible_at = 'infinity' AND s.concurrency_key > $1
   ORDER BY s.concurrency_key LIMIT 1)
  UNION ALL
  SELECT (SELECT s.concurrency_key FROM step s
          WHERE s.state = 'ready' AND s.next_eligible_at = 'infinity' AND s.concurrency_key > q.key
          ORDER BY s.concurrency_key LIMIT 1)
  FROM queued_key q
  WHERE q.key IS NOT NULL
),
picked AS (
  SELECT key FROM queued_key WHERE key IS NOT NULL LIMIT $2
),
key_kind AS (
  SELECT DISTINCT p.key, w.kind
  FROM picked p
  CROSS JOIN LATERAL (
    SELECT s.workflow_id FROM step s
    WHERE s.concurrency_key = p.key AND s.state = 'ready' AND s.next_eligible_at = 'infinity'
    ORDER BY s.concurrency_key, s.priority DESC, s.fair_position, s.id
    LIMIT 100
  ) q
  JOIN workflow w ON w.id = q.workflow_id
)
SELECT key, kind, fl_admit_queued(kind, key, $3) AS admitted FROM key_kind ORDER BY key, kind`,
};
