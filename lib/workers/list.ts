/** Worker sessions for engineers: liveness (heartbeats) and the leases held now. Never evidence of an outcome. */
import { hostname } from "node:os";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { Workers, WorkerSessionView } from "@/lib/api/contract/engineer/workers";
import { run } from "@/lib/engine/db";
import * as sql from "./sql";

/** Sessions shown at most: every live one is recent, and stopped ones only matter briefly. */
export const MAX_SESSIONS = 100;

type Row = {
  id: string;
  host: string;
  pid: number;
  transport: string;
  started_at: Date;
  last_heartbeat_at: Date;
  stopped_at: Date | null;
  stop_reason: string | null;
  heartbeat_age_ms: string;
  db_now: Date;
  leases: { stepId: string; stepName: string; fencingTerm: number; expiresAt: string; expired: boolean }[];
};

export async function listWorkers(pool: StaffReadable, options: { lab: boolean }): Promise<Workers> {
  const rows = await run<Row>(pool, sql.listSessions, [MAX_SESSIONS]);
  const host = hostname();
  const dbNow = rows[0]?.db_now ?? (await run<{ db_now: Date }>(pool, sql.dbNow, []))[0]!.db_now;
  return {
    dbNow: dbNow.toISOString(),
    host,
    lab: options.lab,
    sessions: rows.map(
      (row): WorkerSessionView => ({
        id: row.id,
        host: row.host,
        pid: row.pid,
        transport: row.transport,
        startedAt: row.started_at.toISOString(),
        lastHeartbeatAt: row.last_heartbeat_at.toISOString(),
        heartbeatAgeMs: Math.max(0, Number(row.heartbeat_age_ms)),
        stoppedAt: row.stopped_at?.toISOString() ?? null,
        stopReason: row.stop_reason,
        onThisHost: row.host === host,
        leases: row.leases.map((lease) => ({ ...lease, expiresAt: new Date(lease.expiresAt).toISOString() })),
      }),
    ),
  };
}
