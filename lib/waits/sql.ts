/**
 * The engineers' reads across the wait rooms (lib/waits/rooms.ts): the "waiting for" filter, the
 * events received for a wait's key, and the waits' metrics. Read-only; each room keeps its own
 * writes. The filter and the waiting-steps metric reach each room through its record
 * (lib/engine/waits.ts WaitRecord), so a new room is counted and filtered without a line here.
 */
import type { NamedSql } from "@/lib/engine/db";
import { waitRooms } from "./rooms";

/**
 * A WHERE condition: step `stepId` (an SQL expression) waits now for what `param` names (a
 * room's `waitingFor` word: `'time'`, `'event'`, `'children'`), or `param` is NULL. A room's
 * record is `waiting` exactly while its step is.
 */
export const waitingForCondition = (param: string, stepId: string): string => `(${param}::text IS NULL
    ${waitRooms
      .map((room, i) => `OR (${param} = '${room.record.waitingFor}' AND EXISTS (SELECT 1 FROM ${room.record.table} wr${i} WHERE wr${i}.step_id = ${stepId} AND wr${i}.state = 'waiting'))`)
      .join("\n    ")})`;

/** The newest $3 events received for ($1 name, $2 key), by the event_by_key index, and whether each expired unconsumed. */
export const eventsForKey: NamedSql = {
  name: "fl_read_events_for_key",
  text: `
SELECT e.id, e.sender, e.received_at, e.keep_until, e.consumed_at, e.consumed_by_step_id,
       (e.consumed_at IS NULL AND e.keep_until <= now()) AS expired
FROM event e
WHERE e.name = $1 AND e.correlation_key = $2
ORDER BY e.received_at DESC, e.id DESC
LIMIT $3`,
};

/*
 * The waits' metrics take ($1 from, $2 to, $3 bucket interval) and return (bucket, key, value)
 * rows with a NULL-bucket row per key for the whole range, as lib/metrics/sql.ts's do.
 */

/**
 * Steps waiting at the end of each bucket (or now, for the bucket still running), by the room
 * that holds them (its name is the key): the waits open at the range's start plus a running sum
 * of armings and settlements. The NULL-bucket row is the level now.
 */
export const waitingSteps: NamedSql = {
  name: "fl_metric_waiting_steps",
  text: `
WITH buckets AS (
  SELECT b AS bucket FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 microsecond', $3::interval) AS b
),
kinds AS (SELECT unnest(ARRAY[${waitRooms.map((room) => `'${room.name}'`).join(", ")}]) AS key),
waits AS (
  ${waitRooms
    .map((room) => `SELECT '${room.name}' AS key, armed_at, settled_at FROM ${room.record.table} WHERE armed_at < $2 AND (settled_at IS NULL OR settled_at >= $1)`)
    .join("\n  UNION ALL\n  ")}
),
change AS (
  SELECT key, greatest(date_bin($3::interval, armed_at, $1::timestamptz), $1::timestamptz) AS bucket, 1 AS delta FROM waits
  UNION ALL
  SELECT key, date_bin($3::interval, settled_at, $1::timestamptz), -1 FROM waits WHERE settled_at < $2
),
per_bucket AS (
  SELECT bk.bucket, k.key, coalesce(sum(c.delta), 0) AS delta
  FROM buckets bk CROSS JOIN kinds k LEFT JOIN change c ON c.bucket = bk.bucket AND c.key = k.key
  GROUP BY bk.bucket, k.key
)
SELECT bucket, key, (sum(delta) OVER (PARTITION BY key ORDER BY bucket))::float8 AS value FROM per_bucket
${waitRooms.map((room) => `UNION ALL\nSELECT NULL, '${room.name}', count(*)::float8 FROM ${room.record.table} WHERE state = 'waiting'`).join("\n")}`,
};

/**
 * Events by what became of them: received (when accepted), consumed (when a wait took it), and
 * expired (when its retention ended with no wait taking it; only retentions already over count).
 */
export const eventOutcomes: NamedSql = {
  name: "fl_metric_event_outcomes",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (
  SELECT date_bin($3::interval, received_at, $1::timestamptz) AS bucket, 'received' AS key FROM event WHERE received_at >= $1 AND received_at < $2
  UNION ALL
  SELECT date_bin($3::interval, consumed_at, $1::timestamptz), 'consumed' FROM event WHERE consumed_at >= $1 AND consumed_at < $2
  UNION ALL
  SELECT date_bin($3::interval, keep_until, $1::timestamptz), 'expired' FROM event
  WHERE consumed_at IS NULL AND keep_until >= $1 AND keep_until < $2 AND keep_until <= now()
) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

/** How late each timer fired: its settlement minus its due time, both on the database clock; bucketed by when it fired. */
export const timerLateness: NamedSql = {
  name: "fl_metric_timer_lateness",
  text: `
WITH fired AS (
  SELECT date_bin($3::interval, settled_at, $1::timestamptz) AS bucket, extract(epoch FROM settled_at - due_at)::float8 AS seconds
  FROM timer WHERE state = 'fired' AND settled_at >= $1 AND settled_at < $2
),
stats AS (
  SELECT bucket,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95,
         max(seconds) AS max
  FROM fired
  GROUP BY GROUPING SETS ((bucket), ())
)
SELECT bucket, key, value FROM stats
CROSS JOIN LATERAL (VALUES ('p50', p50), ('p95', p95), ('max', max)) AS v(key, value)`,
};
