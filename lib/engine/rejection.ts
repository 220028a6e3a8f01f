/**
 * Fencing rejections. When a fenced write matches no row, the refusal is explained, recorded,
 * and its payload kept as a late observation, so losing authority never loses evidence.
 */
import { run, type Queryable } from "./db";
import { digestOf } from "./digest";
import { AuthorityLostError } from "./errors";
import * as sql from "./sql/rejection";
import type { LeaseHandle } from "./types";
import type { RejectionReason } from "./vocabulary";

export type RejectedPayload = {
  readonly externalReference: string | null;
  readonly result: unknown;
};

/**
 * What evidence keeps of a payload: its digest, never the payload itself, which may carry a
 * request body or a credential. The external reference travels beside it, in the clear.
 */
export const evidenceOf = (payload: unknown): string => JSON.stringify({ digest: digestOf(payload ?? null) });

type VerdictRow = { step_id: string; fencing_term: string; reason: RejectionReason | null; current_term: string | null };

/**
 * Records refusals for writes by one session. Returns one entry per input: the AuthorityLostError
 * to raise, or null where the holder still has authority (the write failed for another reason).
 */
export async function recordRejections(
  db: Queryable,
  sessionId: string,
  refused: readonly { lease: LeaseHandle; operation: string; payload: RejectedPayload | null }[],
): Promise<(AuthorityLostError | null)[]> {
  if (refused.length === 0) return [];
  const rows = await run<VerdictRow>(db, sql.recordRejections, [
    sessionId,
    refused.map((r) => r.lease.stepId),
    refused.map((r) => r.lease.fencingTerm.toString()),
    refused.map((r) => r.operation),
    refused.map((r) => r.payload?.externalReference ?? null),
    refused.map((r) => (r.payload ? evidenceOf(r.payload.result) : null)),
  ]);
  return rows.map((row, index) => {
    const { lease, operation } = refused[index]!;
    if (row.reason === null) return null;
    return new AuthorityLostError(
      operation,
      lease.stepId,
      lease.fencingTerm,
      row.reason,
      row.current_term === null ? null : BigInt(row.current_term),
    );
  });
}

export async function recordRejection(
  db: Queryable,
  lease: LeaseHandle,
  operation: string,
  payload: RejectedPayload | null,
): Promise<AuthorityLostError | null> {
  const [rejection] = await recordRejections(db, lease.sessionId, [{ lease, operation, payload }]);
  return rejection ?? null;
}
