/** Worker sessions: liveness only, unique per process start. Never evidence of an outcome. */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { run, type Queryable } from "./db";
import * as sql from "./sql/session";

export async function registerSession(db: Queryable, transport: string, pid = process.pid): Promise<string> {
  const id = randomUUID();
  await run(db, sql.registerSession, [id, hostname(), pid, transport]);
  return id;
}

/** Returns false when the session was already stopped. */
export async function heartbeatSession(db: Queryable, sessionId: string): Promise<boolean> {
  const rows = await run(db, sql.heartbeatSession, [sessionId]);
  return rows.length === 1;
}

export async function stopSession(db: Queryable, sessionId: string, reason: string): Promise<void> {
  await run(db, sql.stopSession, [sessionId, reason]);
}
