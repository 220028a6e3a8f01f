/** Worker sessions: liveness only, unique per process start. Never evidence of an outcome. */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Pool } from "pg";
import type { Registration } from "@/lib/definitions/registration";
import { inTransaction, run, type Queryable } from "./db";
import { registerDefinitions } from "./registration";
import * as sql from "./sql/session";
import type { WorkflowVersion } from "./types";

/** A session that serves nothing yet (tests and tools that claim by hand). */
export async function registerSession(db: Queryable, transport: string, pid = process.pid): Promise<string> {
  const id = randomUUID();
  await run(db, sql.registerSession, [id, hostname(), pid, transport, null]);
  return id;
}

export type WorkerSessionRequest = {
  readonly transport: "direct" | "http";
  readonly host?: string;
  readonly pid?: number;
  /** The worker token the session belongs to (HTTP transport). */
  readonly workerTokenId?: string | null;
  readonly registration: Registration;
};

/**
 * Registers a worker's session together with the definitions it serves, in one transaction: a
 * refused definition leaves no session behind.
 */
export async function registerWorkerSession(pool: Pool, request: WorkerSessionRequest): Promise<{ sessionId: string; served: WorkflowVersion[] }> {
  const sessionId = randomUUID();
  return inTransaction(pool, async (client) => {
    await run(client, sql.registerSession, [sessionId, request.host ?? hostname(), request.pid ?? process.pid, request.transport, request.workerTokenId ?? null]);
    const served = await registerDefinitions(client, sessionId, request.registration);
    return { sessionId, served };
  });
}

/** Returns false when the session was already stopped. */
export async function heartbeatSession(db: Queryable, sessionId: string): Promise<boolean> {
  const rows = await run(db, sql.heartbeatSession, [sessionId]);
  return rows.length === 1;
}

export async function stopSession(db: Queryable, sessionId: string, reason: string): Promise<void> {
  await run(db, sql.stopSession, [sessionId, reason]);
}
