import type { NamedSql } from "../db";

/** Session $1 on host $2, pid $3, transport $4, belonging to worker token $5 (HTTP) or none. */
export const registerSession: NamedSql = {
  name: "fl_register_session",
  text: `INSERT INTO worker_session (id, host, pid, transport, worker_token_id) VALUES ($1, $2, $3, $4, $5::bigint) RETURNING started_at`,
};

export const heartbeatSession: NamedSql = {
  name: "fl_heartbeat_session",
  text: `UPDATE worker_session SET last_heartbeat_at = now() WHERE id = $1 AND stopped_at IS NULL RETURNING id`,
};

export const stopSession: NamedSql = {
  name: "fl_stop_session",
  text: `UPDATE worker_session SET stopped_at = now(), stop_reason = $2 WHERE id = $1 AND stopped_at IS NULL`,
};
