import type { NamedSql } from "@/lib/engine/db";

/**
 * Worker sessions, live ones first, then the most recently stopped, with the leases each holds
 * now (open lease rows; `expired` when the database clock has passed expiresAt but the recovery
 * scan has not ended it yet). $1 bounds the number of sessions.
 */
export const listSessions: NamedSql = {
  name: "fl_eng_list_sessions",
  text: `
SELECT ws.id, ws.host, ws.pid, ws.transport, ws.started_at, ws.last_heartbeat_at, ws.stopped_at, ws.stop_reason,
       (extract(epoch FROM now() - ws.last_heartbeat_at) * 1000)::bigint AS heartbeat_age_ms,
       now() AS db_now,
       (SELECT coalesce(json_agg(json_build_object('stepId', l.step_id, 'stepName', s.name, 'fencingTerm', l.fencing_term,
                                                   'expiresAt', l.expires_at, 'expired', l.expires_at <= now())
                                 ORDER BY l.leased_at), '[]'::json)
        FROM lease l JOIN step s ON s.id = l.step_id
        WHERE l.owner_session_id = ws.id AND l.ended_at IS NULL) AS leases
FROM worker_session ws
ORDER BY (ws.stopped_at IS NULL) DESC, coalesce(ws.stopped_at, ws.last_heartbeat_at) DESC, ws.id
LIMIT $1`,
};

/** $1 session: what the fault lab needs to decide whether it may signal it. */
export const readSession: NamedSql = {
  name: "fl_eng_read_session",
  text: `SELECT id, host, pid, stopped_at FROM worker_session WHERE id = $1`,
};

export const dbNow: NamedSql = { name: "fl_eng_db_now", text: `SELECT now() AS db_now` };
