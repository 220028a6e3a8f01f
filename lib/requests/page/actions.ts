/**
 * What an operator does from the request's page: cancel it, or rerun a failed one from a step.
 * Each is authorised by its route, sent with the version of the request the operator saw (a
 * stale view is refused with what the request is now), audited with who and why, and
 * idempotent: a cancel of a cancelled request answers it as it is; a rerun repeated after it
 * applied answers the rerun already made.
 */
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/append";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { NotFoundError, RequestEndedError } from "@/lib/engine/errors";
import type { AttemptMode, StepState, WorkflowStatus } from "@/lib/engine/vocabulary";
import { cancelActiveRequest } from "@/lib/requests/read";
import * as sql from "./actions-sql";
import { RerunRefusedError, StaleRequestViewError, type CurrentRequest } from "./errors";

/** A rerun's new attempt budget per step, unless the operator gives one. */
export const DEFAULT_RERUN_BUDGET = 3;
export const MAX_RERUN_BUDGET = 20;
const REVIEW_BY_HOURS = 24;

type CurrentRow = { status: WorkflowStatus; version_tag: string; steps: CurrentRequest["steps"] };

/** The request as the primary has it now; NotFoundError when there is none. */
export async function currentRequest(db: Queryable, id: string): Promise<CurrentRequest> {
  const [row] = await run<CurrentRow>(db, sql.readCurrentVersion, [id]);
  if (!row) throw new NotFoundError("request", id);
  return { status: row.status, version: row.version_tag, steps: row.steps };
}

export type PageCancelOutcome = { readonly requestId: string; readonly cancelled: boolean; readonly alreadyCancelled: boolean; readonly status: WorkflowStatus; readonly version: string };

/**
 * Cancels request `id` for staff member `actor`, when `seenVersion` is still its version: one
 * statement with the version in its guard (cancelActiveRequest), so a change committed after the
 * operator's read is refused, never cancelled over. Whatever cancelling runs (compensations)
 * runs for it too. A cancelled request answers as it is; a request that moved since is refused
 * with StaleRequestViewError, one that ended as it was seen with RequestEndedError.
 */
export async function cancelFromPage(pool: Pool, id: string, seenVersion: string, reason: string, actor: string): Promise<PageCancelOutcome> {
  const cancelled = await cancelActiveRequest(pool, id, `cancelled by ${actor}: ${reason}`, seenVersion);
  const now = await currentRequest(pool, id);
  if (!cancelled) {
    if (now.status === "cancelled") return { requestId: id, cancelled: false, alreadyCancelled: true, status: now.status, version: now.version };
    // An active request is refused only for its version; an ended one is stale unless it ended as seen.
    if (now.status === "active" || now.version !== seenVersion) throw new StaleRequestViewError(id, now);
    throw new RequestEndedError(id, now.status);
  }
  await appendAudit(pool, { actor, action: "request.cancelled", subjectType: "request", subjectId: id, before: { status: "active", version: seenVersion }, after: { status: now.status, reason } });
  return { requestId: id, cancelled: true, alreadyCancelled: false, status: now.status, version: now.version };
}

export type RerunStep = { readonly stepId: string; readonly name: string; readonly state: StepState; readonly nextMode: AttemptMode };
export type RerunOutcome = {
  readonly requestId: string;
  /** False when this repeats a rerun already made from the same view. */
  readonly applied: boolean;
  readonly steps: RerunStep[];
  /** Steps whose outcome is unknown: they went to review, and nothing runs for them until a person settles it. */
  readonly toReview: string[];
  readonly version: string;
};

type AuditedRerun = { after: { steps: RerunStep[]; seenVersion: string; fromStepId: string } };

/** Why a rerun from `fromStepId` cannot apply to the request as it is now. */
function refusal(current: CurrentRequest, fromStepId: string): string {
  if (current.status !== "failed") return `it is ${current.status}; only a request that could not be completed is rerun`;
  const index = current.steps.findIndex((step) => step.id === fromStepId);
  if (index < 0) return "that step is not one of this request's";
  const from = current.steps[index]!;
  if (from.state === "completed" || from.state === "completed_without_effect") return `step ${from.name} has its receipt: it is never run again`;
  const unfinished = current.steps.slice(0, index).find((step) => step.state !== "completed" && step.state !== "completed_without_effect");
  if (unfinished) return `step ${unfinished.name} before it has no receipt: rerun from ${unfinished.name}`;
  const busy = current.steps.find((step) => ["leased", "waiting", "indeterminate"].includes(step.state));
  if (busy) return `step ${busy.name} is ${busy.state}`;
  return "the request changed";
}

/**
 * Reruns failed request `id` from step `fromStepId`, for `actor`, when `seenVersion` is still its
 * version (actions-sql.ts rerunFromStep says what is rearmed and what goes to review).
 */
export async function rerunFromStep(
  pool: Pool,
  input: { readonly id: string; readonly fromStepId: string; readonly seenVersion: string; readonly budget: number; readonly reason: string; readonly actor: string },
): Promise<RerunOutcome> {
  const { id, fromStepId, seenVersion, budget, reason, actor } = input;
  if (!Number.isInteger(budget) || budget < 1 || budget > MAX_RERUN_BUDGET) throw new RangeError(`budget must be 1–${MAX_RERUN_BUDGET}`);
  const steps = await inTransaction(pool, async (client) => {
    const rows = await run<{ id: string; name: string; state: StepState; next_mode: AttemptMode }>(client, sql.rerunFromStep, [
      id, fromStepId, seenVersion, budget, `rerun by ${actor}: ${reason}`, actor, REVIEW_BY_HOURS,
    ]);
    if (rows.length === 0) return null;
    const rearmed = rows.map((row) => ({ stepId: row.id, name: row.name, state: row.state, nextMode: row.next_mode }));
    await appendAudit(client, { actor, action: "request.rerun", subjectType: "request", subjectId: id, before: { status: "failed" }, after: { steps: rearmed, seenVersion, fromStepId, budget, reason } });
    return rearmed;
  });
  const now = await currentRequest(pool, id);
  if (steps) return { requestId: id, applied: true, steps, toReview: steps.filter((s) => s.state === "indeterminate").map((s) => s.stepId), version: now.version };

  // Nothing applied. The same rerun already made from the same view is answered as it was.
  const earlier = await run<AuditedRerun>(pool, sql.readEarlierRerun, [id, seenVersion, fromStepId]);
  if (earlier[0]) {
    const made = earlier[0].after.steps;
    return { requestId: id, applied: false, steps: made, toReview: made.filter((s) => s.state === "indeterminate").map((s) => s.stepId), version: now.version };
  }
  if (now.version !== seenVersion) throw new StaleRequestViewError(id, now);
  throw new RerunRefusedError(id, refusal(now, fromStepId), now);
}
