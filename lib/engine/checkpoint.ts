/**
 * The attempt's checkpoints before its receipt: request identity persisted, invocation began,
 * response observed. Each is one fenced write; a refused one raises AuthorityLostError after the
 * refusal and its payload were recorded.
 */
import { run, type NamedSql, type Queryable } from "./db";
import { CheckpointOrderError } from "./errors";
import { recordRejection, type RejectedPayload } from "./rejection";
import * as sql from "./sql/checkpoint";
import type { CheckpointAck, LeaseHandle } from "./types";

async function fencedCheckpoint<Row extends { checkpoint_version: number }>(
  db: Queryable,
  lease: LeaseHandle,
  operation: string,
  statement: NamedSql,
  extra: unknown[],
  payload: RejectedPayload | null,
): Promise<Row> {
  const [row] = await run<Row>(db, statement, [lease.sessionId, lease.stepId, lease.fencingTerm.toString(), ...extra]);
  if (row) return row;
  const rejection = await recordRejection(db, lease, operation, payload);
  if (rejection) throw rejection;
  throw new CheckpointOrderError(operation, lease.stepId);
}

/**
 * Checkpoint 2. Persists the step's request identity (stable per step, reused by every retry)
 * and returns the identity actually in force, which is the proposal only for the first attempt.
 */
export async function persistRequestIdentity(
  db: Queryable,
  lease: LeaseHandle,
  proposedIdentity: string,
  adapterVersion: string,
): Promise<CheckpointAck & { requestIdentity: string }> {
  const row = await fencedCheckpoint<{ checkpoint_version: number; request_identity: string }>(
    db,
    lease,
    "persist_request_identity",
    sql.persistRequestIdentity,
    [proposedIdentity, adapterVersion],
    null,
  );
  return { checkpointVersion: row.checkpoint_version, requestIdentity: row.request_identity };
}

/** Checkpoint 3: from here on, the destination may have acted. */
export async function beginInvocation(db: Queryable, lease: LeaseHandle): Promise<CheckpointAck> {
  const row = await fencedCheckpoint(db, lease, "begin_invocation", sql.beginInvocation, [], null);
  return { checkpointVersion: row.checkpoint_version };
}

/** Checkpoint 4: the destination's answer, durable before the receipt is attempted. */
export async function observeResponse(
  db: Queryable,
  lease: LeaseHandle,
  externalReference: string | null,
  result: unknown,
): Promise<CheckpointAck> {
  const row = await fencedCheckpoint(
    db,
    lease,
    "observe_response",
    sql.observeResponse,
    [externalReference, JSON.stringify(result ?? null)],
    { externalReference, result },
  );
  return { checkpointVersion: row.checkpoint_version };
}

/**
 * Checkpoint 4 for a call that applied nothing: the destination refused it definitely, or a
 * status query found no trace of the request identity. Recovery may then retry safely.
 */
export async function observeEffectAbsent(db: Queryable, lease: LeaseHandle, answer: unknown): Promise<CheckpointAck> {
  const row = await fencedCheckpoint(db, lease, "observe_effect_absent", sql.observeEffectAbsent, [JSON.stringify(answer ?? null)], {
    externalReference: null,
    result: { effect: "absent", answer },
  });
  return { checkpointVersion: row.checkpoint_version };
}
