/** The staff overview's figures, read in one statement so every figure is of the same moment. */
import type { NamedSql } from "@/lib/engine/db";
import { SESSION_LIVE_WITHIN } from "@/lib/engine/sql/registration";
import { activeHeadlineOf } from "@/lib/projection/sql";

/**
 * The database clock; active requests counted by the headline their end users see; open review
 * cases and those past their review-by time; receipts written in the hour before now; worker
 * sessions alive (not stopped, heartbeat within the liveness window); fenced destinations left
 * blocked by an epoch transition; enabled webhook endpoints whose deliveries have failed for an
 * hour or more (the workers page's threshold).
 */
export const readOverviewFigures: NamedSql = {
  name: "fl_overview_figures",
  text: `
SELECT now() AS db_now,
       (SELECT coalesce(json_object_agg(headline, n), '{}'::json)
        FROM (SELECT headline, count(*)::int AS n
              FROM (SELECT ${activeHeadlineOf("w")} AS headline FROM workflow w WHERE w.status = 'active') active
              GROUP BY headline) counted) AS in_flight,
       (SELECT count(*)::int FROM review_case c WHERE c.status = 'open') AS open_reviews,
       (SELECT count(*)::int FROM review_case c WHERE c.status = 'open' AND c.review_by <= now()) AS overdue_reviews,
       (SELECT count(*)::int FROM receipt r WHERE r.created_at >= now() - interval '1 hour') AS receipts_last_hour,
       (SELECT count(*)::int FROM worker_session ws
        WHERE ws.stopped_at IS NULL AND ws.last_heartbeat_at > now() - ${SESSION_LIVE_WITHIN}) AS workers_alive,
       (SELECT coalesce(json_agg(json_build_object('adapter', b.adapter, 'epoch', b.epoch::text, 'reason', b.reason, 'since', b.since)
                                 ORDER BY b.adapter), '[]'::json)
        FROM destination_block b) AS blocked_destinations,
       (SELECT coalesce(json_agg(json_build_object('id', ep.id, 'url', ep.url, 'since', ep.failing_since) ORDER BY ep.failing_since, ep.id), '[]'::json)
        FROM webhook_endpoint ep
        WHERE ep.disabled_at IS NULL AND ep.failing_since <= now() - interval '1 hour') AS failing_endpoints`,
};
