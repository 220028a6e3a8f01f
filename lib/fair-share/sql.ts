/**
 * The named SQL of fair share's console: each kind's settings and an admin's override of them,
 * and what engineers read of keys and destination rates. The claim, admission and the permit's
 * rate live with the engine (lib/engine/sql/lease.ts, admission.ts, permit.ts).
 */
import type { NamedSql } from "@/lib/engine/db";

/** Every registered kind: its highest version's declaration and any override of it. */
export const kindSettings: NamedSql = {
  name: "fl_fair_share_kind_settings",
  text: `
SELECT k.kind, d.version, d.limit_per_key AS declared_limit, d.fairness AS declared_fairness, d.default_priority,
       o.kind IS NOT NULL AS overridden, o.limit_per_key AS override_limit, o.fairness AS override_fairness,
       o.reason AS override_reason, o.set_by AS override_by, o.set_at AS override_at
FROM (SELECT DISTINCT kind FROM workflow_definition) k
CROSS JOIN LATERAL (
  SELECT wd.version, wd.limit_per_key, wd.fairness, wd.default_priority
  FROM workflow_definition wd WHERE wd.kind = k.kind ORDER BY wd.version DESC LIMIT 1
) d
LEFT JOIN fair_share_override o ON o.kind = k.kind
WHERE $1::text IS NULL OR k.kind = $1
ORDER BY k.kind`,
};

/** Sets kind $1's override: $2 limit per key (NULL: none), $3 fairness, $4 reason, $5 by whom. Returns the row it replaced, if any. */
export const setOverride: NamedSql = {
  name: "fl_fair_share_set_override",
  text: `
WITH previous AS (SELECT * FROM fair_share_override WHERE kind = $1 FOR UPDATE)
INSERT INTO fair_share_override AS o (kind, limit_per_key, fairness, reason, set_by)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (kind) DO UPDATE
SET limit_per_key = excluded.limit_per_key, fairness = excluded.fairness, reason = excluded.reason, set_by = excluded.set_by, set_at = now()
RETURNING (SELECT to_jsonb(p) - 'kind' FROM previous p) AS previous`,
};

/** Removes kind $1's override; returns it when there was one. */
export const clearOverride: NamedSql = {
  name: "fl_fair_share_clear_override",
  text: `DELETE FROM fair_share_override WHERE kind = $1 RETURNING limit_per_key, fairness, reason, set_by, set_at`,
};

/**
 * Concurrency keys with ready or leased steps, by kind: ready to claim, queued behind the key's
 * limit, in flight (leased), admitted under the limit (slots held), and since when the oldest of
 * its ready steps has waited. The $1 busiest, and the $2 that have waited longest; `keys` counts
 * all of them.
 */
export const activeKeys: NamedSql = {
  name: "fl_fair_share_active_keys",
  text: `
WITH active AS (
  SELECT w.kind, s.concurrency_key AS key,
         count(*) FILTER (WHERE s.state = 'ready' AND s.next_eligible_at < 'infinity')::int AS ready,
         count(*) FILTER (WHERE s.state = 'ready' AND s.next_eligible_at = 'infinity')::int AS queued,
         count(*) FILTER (WHERE s.state = 'leased')::int AS in_flight,
         min(s.updated_at) FILTER (WHERE s.state = 'ready') AS waiting_since
  FROM step s JOIN workflow w ON w.id = s.workflow_id
  WHERE s.concurrency_key IS NOT NULL AND s.state IN ('ready', 'leased')
  GROUP BY w.kind, s.concurrency_key
),
busiest AS (
  SELECT * FROM active ORDER BY ready + queued + in_flight DESC, kind, key LIMIT $1
),
longest AS (
  SELECT * FROM active WHERE waiting_since IS NOT NULL ORDER BY waiting_since, kind, key LIMIT $2
),
shown AS (
  SELECT *, true AS busiest, false AS longest FROM busiest
  UNION ALL
  SELECT *, false, true FROM longest
)
SELECT s.kind, s.key, s.ready, s.queued, s.in_flight, s.waiting_since, s.busiest, s.longest,
       f.limit_per_key, f.fairness,
       (SELECT count(*)::int FROM concurrency_slot sl WHERE sl.kind = s.kind AND sl.key = s.key) AS admitted,
       (SELECT count(*)::int FROM active) AS keys,
       now() AS db_now
FROM shown s CROSS JOIN LATERAL fl_fair_share(s.kind) f`,
};

/**
 * Each destination with a declared rate: the rate, calls started in the last second (its call
 * slots used since), calls in flight (its permits), and steps waiting for a call slot.
 */
export const destinationRates: NamedSql = {
  name: "fl_fair_share_destination_rates",
  text: `
WITH waiting AS (
  SELECT s.adapter, count(*)::int AS n
  FROM step s
  WHERE s.state = 'ready' AND s.next_eligible_at > now() AND s.next_eligible_at < 'infinity'
    AND s.state_reason LIKE 'waiting: no call slot free at %'
  GROUP BY s.adapter
)
SELECT r.adapter, r.per_second, r.burst, r.declared_by,
       (SELECT count(*)::int FROM adapter_call_slot sl WHERE sl.adapter = r.adapter AND sl.called_at > now() - interval '1 second') AS calls_last_second,
       (SELECT coalesce(sum(c.in_use), 0)::int FROM adapter_capacity c WHERE c.adapter = r.adapter) AS in_flight,
       coalesce(w.n, 0) AS waiting
FROM adapter_rate r LEFT JOIN waiting w ON w.adapter = r.adapter
ORDER BY r.adapter`,
};
