/**
 * Adapter permits: a separate, short lease on destination capacity, taken just before an
 * invocation and released as soon as the destination has answered. A call that ended without a
 * known outcome keeps its permit (held): the destination may still be working on it, so its
 * capacity stays spoken for until the step's outcome is settled or no call can still be running.
 */
import { run, type Queryable } from "./db";
import { recordRejection } from "./rejection";
import * as sql from "./sql/permit";
import { HELD_PERMIT_FACTOR } from "./permit-policy";
import type { LeaseHandle, Permit, PermitRefusal, PermitRequest } from "./types";

/**
 * Takes a permit for the lease's attempt. Returns the permit, or a refusal saying how long to
 * wait when capacity is in use or the destination's rate allows no call now. A lease that no longer holds authority is a fenced write refused:
 * recorded as a fencing rejection, and raised as AuthorityLostError.
 */
export async function acquirePermit(db: Queryable, lease: LeaseHandle, request: PermitRequest): Promise<Permit | PermitRefusal> {
  const [row] = await run<{ id: string | null; expires_at: Date | null; wait_ms: number | null; reason: PermitRefusal["reason"] | null; rated: boolean }>(db, sql.acquirePermit, [
    lease.sessionId,
    lease.stepId,
    lease.fencingTerm.toString(),
    request.adapter,
    request.operationClass,
    request.limit,
    Math.max(1, Math.round(request.ttlMs)),
    request.requestIdentity,
  ]);
  if (!row) {
    const rejection = await recordRejection(db, lease, "acquire_permit", null);
    // Lost authority never returns, so a refusal always has its reason; anything else is a bug.
    throw rejection ?? new Error(`acquirePermit: step ${lease.stepId} term ${lease.fencingTerm} refused without a reason`);
  }
  if (row.id !== null && row.expires_at !== null) return { permitId: row.id, expiresAt: row.expires_at, rated: row.rated };
  return { waitMs: row.wait_ms, reason: row.reason ?? "capacity" };
}


export async function releasePermit(db: Queryable, permitId: string): Promise<void> {
  await run(db, sql.releasePermit, [permitId]);
}

/** The call ended with an unknown outcome: keep the capacity counted for up to `holdMs`. */
export async function holdPermit(db: Queryable, permitId: string, reason: string, holdMs: number): Promise<void> {
  await run(db, sql.holdPermit, [permitId, reason, Math.max(1, Math.round(holdMs))]);
}

/**
 * One bounded sweep of expired and settled permits; returns how many changed state. A vanished
 * holder's unanswered call is held for HELD_PERMIT_FACTOR times the permit's own lifetime.
 */
export async function sweepPermits(db: Queryable, batchSize: number): Promise<number> {
  const rows = await run(db, sql.sweepPermits, [HELD_PERMIT_FACTOR, batchSize]);
  return rows.length;
}
