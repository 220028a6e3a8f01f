import type { NamedSql } from "../db";

export const registerSession: NamedSql = {
  name: "fl_register_session",
  text: `INSERT INTO worker_session (id, host, pid, transport) VALUES ($1, $2, $3, $4) RETURNING started_at`,
};

export const heartbeatSession: NamedSql = {
  name: "fl_heartbeat_session",
  text: `UPDATE worker_session SET last_heartbeat_at = now() WHERE id = $1 AND stopped_at IS NULL RETURNING id`,
};

export const stopSession: NamedSql = {
  name: "fl_stop_session",
  text: `UPDATE worker_session SET stopped_at = now(), stop_reason = $2 WHERE id = $1 AND stopped_at IS NULL`,
};
