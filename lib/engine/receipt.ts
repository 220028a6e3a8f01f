/**
 * Receipts: a step's accepted conclusion. A worker's receipts are committed in batches, each one
 * individually fenced: the lease ends, the attempt concludes, the receipt is written and the
 * step's dependants are released, all in one short transaction.
 */
import type { Pool } from "pg";
import { inTransaction, run, type Queryable } from "./db";
import type { AuthorityLostError } from "./errors";
import { recordRejections } from "./rejection";
import * as sql from "./sql/receipt";
import type { ReceiptRequest, ReceiptResult, StepConclusion } from "./types";
import type { VerificationMethod } from "./vocabulary";


export type CompletionRequest = {
  readonly attemptId: string;
  readonly verification: VerificationMethod;
  readonly stepState: "completed" | "completed_without_effect";
  readonly externalReference: string | null;
  readonly result: unknown;
};

/** Writes receipts and completes steps; the caller already holds each step's authority. */
export async function completeSteps(
  db: Queryable,
  completions: readonly CompletionRequest[],
): Promise<Map<string, string>> {
  if (completions.length === 0) return new Map();
  const rows = await run<{ receipt_id: string; step_id: string }>(db, sql.completeSteps, [
    completions.map((c) => c.attemptId),
    completions.map((c) => c.verification),
    completions.map((c) => c.stepState),
    completions.map((c) => c.externalReference),
    completions.map((c) => (c.result === undefined ? null : JSON.stringify(c.result))),
  ]);
  return new Map(rows.map((row) => [row.step_id, row.receipt_id]));
}

const outcomeReason = (conclusion: StepConclusion): string | null =>
  conclusion.kind === "effect" ? null : conclusion.reason;

/**
 * Commits the receipts of one session. Every request is fenced on its own lease; the ones that
 * lost authority come back as AuthorityLostError, with their payload kept as late observations.
 */
export async function commitReceipts(
  pool: Pool,
  sessionId: string,
  requests: readonly ReceiptRequest[],
): Promise<ReceiptResult[]> {
  if (requests.length === 0) return [];
  for (const { lease } of requests) {
    if (lease.sessionId !== sessionId) throw new Error("commitReceipts: every lease must belong to the session");
  }
  return inTransaction(pool, async (client) => {
    const concluded = await run<{ attempt_id: string; step_id: string }>(client, sql.concludeAttempts, [
      sessionId,
      requests.map((r) => r.lease.stepId),
      requests.map((r) => r.lease.fencingTerm.toString()),
      requests.map((r) => r.conclusion.kind),
      requests.map((r) => outcomeReason(r.conclusion)),
      requests.map((r) => (r.conclusion.kind === "effect" ? r.conclusion.externalReference : null)),
      requests.map((r) => (r.conclusion.kind === "effect" ? JSON.stringify(r.conclusion.result ?? null) : null)),
    ]);
    const attemptByStep = new Map(concluded.map((row) => [row.step_id, row.attempt_id]));
    const accepted = requests.filter((r) => attemptByStep.has(r.lease.stepId));
    const receipts = await completeSteps(
      client,
      accepted.map(({ lease, conclusion }) => ({
        attemptId: attemptByStep.get(lease.stepId)!,
        verification: conclusion.kind === "effect" ? conclusion.verification : "no_action_needed",
        stepState: conclusion.kind === "effect" ? "completed" : "completed_without_effect",
        externalReference: null,
        result: undefined,
      })),
    );
    const refused = requests.filter((r) => !attemptByStep.has(r.lease.stepId));
    const errors = await recordRejections(
      client,
      sessionId,
      refused.map(({ lease, conclusion }) => ({
        lease,
        operation: "commit_receipt",
        payload:
          conclusion.kind === "effect"
            ? { externalReference: conclusion.externalReference, result: conclusion.result }
            : { externalReference: null, result: { outcome: conclusion.kind, reason: conclusion.reason } },
      })),
    );
    const errorByStep = new Map(refused.map((r, i) => [r.lease.stepId, errors[i]]));
    return requests.map((r): ReceiptResult => {
      const receiptId = receipts.get(r.lease.stepId);
      if (receiptId) return { stepId: r.lease.stepId, committed: true, receiptId };
      const error = errorByStep.get(r.lease.stepId);
      if (!error) throw new Error(`commitReceipts: step ${r.lease.stepId} was neither committed nor refused`);
      return { stepId: r.lease.stepId, committed: false, error };
    });
  });
}
