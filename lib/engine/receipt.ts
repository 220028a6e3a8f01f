/**
 * Receipts: a step's accepted conclusion. A worker's receipts are committed in batches, each one
 * individually fenced: the lease ends, the attempt concludes, the receipt is written and the
 * step's dependants are released, all in one statement.
 */
import type { Pool } from "pg";
import { run, type Queryable } from "./db";
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
 * The accepted receipts commit in one statement of their own; refusals are recorded after it, as
 * every other fenced write's are (a refusal is evidence of a write that was not applied, not
 * part of the ones that were).
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
  const effect = (r: ReceiptRequest) => (r.conclusion.kind === "effect" ? r.conclusion : null);
  const rows = await run<{ receipt_id: string; step_id: string }>(pool, sql.commitReceipts, [
    sessionId,
    requests.map((r) => r.lease.stepId),
    requests.map((r) => r.lease.fencingTerm.toString()),
    requests.map((r) => r.conclusion.kind),
    requests.map((r) => outcomeReason(r.conclusion)),
    requests.map((r) => effect(r)?.externalReference ?? null),
    requests.map((r) => (effect(r) ? JSON.stringify(effect(r)!.result ?? null) : null)),
    requests.map((r) => effect(r)?.verification ?? "no_action_needed"),
    requests.map((r) => (effect(r) ? "completed" : "completed_without_effect")),
  ]);
  const receipts = new Map(rows.map((row) => [row.step_id, row.receipt_id]));
  const refused = requests.filter((r) => !receipts.has(r.lease.stepId));
  const errors = await recordRejections(
    pool,
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
}
