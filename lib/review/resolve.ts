/**
 * Resolving a review case. A person settles what the evidence could not:
 *
 *   confirm_delivered      the destination did apply it: a receipt (manual review) with the
 *                          reference the person found, the step completes, dependants run;
 *                          without a reference, the note saying how it was confirmed is required
 *                          and the receipt records it (`confirmedWithoutReference`, `howConfirmed`)
 *   confirm_not_delivered  it did not: the unanswered attempts are recorded as absent and the
 *                          step runs again with the same request identity
 *   abandon                stop: the step fails and the request ends with a reason its customer sees
 *
 * Each is one guarded transition (case open, version as seen, step indeterminate), recorded on the
 * case with who, when, what and why, and in the audit log in the same transaction. Repeating a resolution that was already applied the same way
 * changes nothing and answers `replayed`; any other mismatch is a ReviewConflictError.
 */
import type { Pool, PoolClient } from "pg";
import type { ResolutionBody, ResolutionResult } from "@/lib/api/contract/support";
import { appendAudit } from "@/lib/audit/append";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { InvalidInputError, NotFoundError } from "@/lib/engine/errors";
import { completeSteps } from "@/lib/engine/receipt";
import type { ReviewStatus } from "@/lib/engine/vocabulary";
import { ReviewConflictError } from "./errors";
import * as sql from "./sql";

type ResolvedRow = { id: string; step_id: string; resolution: ResolutionBody["resolution"]; resolved_by: string; resolved_at: Date; version: number };

const resultOf = (row: ResolvedRow, replayed: boolean): ResolutionResult => ({
  caseId: row.id,
  resolution: row.resolution,
  resolvedBy: row.resolved_by,
  resolvedAt: row.resolved_at.toISOString(),
  version: row.version,
  replayed,
});

export async function resolveReviewCase(pool: Pool, caseId: string, body: ResolutionBody, actor: string): Promise<ResolutionResult> {
  const applied = await inTransaction(pool, async (client) => {
    const row = await applyResolution(client, caseId, body, actor);
    // The audit entry commits with the resolution or not at all.
    if (row) {
      await appendAudit(client, {
        actor,
        action: "review.resolved",
        subjectType: "review_case",
        subjectId: caseId,
        before: { status: "open", version: body.version },
        after: { status: "resolved", ...body, version: row.version },
      });
    }
    return row;
  });
  if (applied) return resultOf(applied, false);
  return explainRefusal(pool, caseId, body, actor);
}

/** The guarded transition for one resolution; null when the case was not open at the version seen. */
async function applyResolution(client: PoolClient, caseId: string, body: ResolutionBody, actor: string): Promise<ResolvedRow | null> {
  switch (body.resolution) {
    case "confirm_delivered": {
      const reference = body.externalReference ?? null;
      if (reference === null && body.note.trim() === "") {
        throw new InvalidInputError("confirm delivered", [{ path: "note", message: "without an external reference, say how you confirmed delivery: it is recorded in the receipt" }]);
      }
      const [row] = await run<ResolvedRow & { attempt_id: string | null }>(client, sql.resolveDelivered, [
        caseId, body.version, actor, body.note, reference,
      ]);
      if (!row) return null;
      if (!row.attempt_id) throw new Error(`resolveReviewCase: case ${caseId} has a step without any attempt`);
      // Without a reference the receipt says so, and keeps how the person confirmed it instead.
      const result = reference === null
        ? { confirmedBy: actor, reviewCaseId: caseId, note: body.note, confirmedWithoutReference: true, howConfirmed: body.note }
        : { confirmedBy: actor, reviewCaseId: caseId, note: body.note };
      const receipts = await completeSteps(client, [{
        attemptId: row.attempt_id,
        verification: "manual_review",
        stepState: "completed",
        externalReference: reference,
        result,
      }]);
      if (!receipts.has(row.step_id)) throw new Error(`resolveReviewCase: no receipt was written for step ${row.step_id}`);
      return row;
    }
    case "confirm_not_delivered": {
      const [row] = await run<ResolvedRow>(client, sql.resolveNotDelivered, [caseId, body.version, actor, body.note]);
      return row ?? null;
    }
    case "abandon": {
      const [row] = await run<ResolvedRow>(client, sql.resolveAbandon, [caseId, body.version, actor, body.note, body.customerReason]);
      return row ?? null;
    }
  }
}

type RefusalRow = {
  status: ReviewStatus;
  version: number;
  resolution: ResolutionBody["resolution"] | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  external_reference: string | null;
  assignee: string | null;
  assigned_at: Date | null;
  step_state: string;
  workflow_status: string;
};

/** The resolution matched no row: say why, or recognise a repeat of what was already done. */
async function explainRefusal(db: Queryable, caseId: string, body: ResolutionBody, actor: string): Promise<ResolutionResult> {
  const [row] = await run<RefusalRow>(db, sql.explainRefusal, [caseId]);
  if (!row) throw new NotFoundError("review case", caseId);
  if (row.status === "resolved") {
    const sameDecision =
      row.resolution === body.resolution &&
      (body.resolution !== "confirm_delivered" || row.external_reference === (body.externalReference ?? null));
    if (sameDecision && row.resolved_by && row.resolved_at) {
      return resultOf({ id: caseId, step_id: "", resolution: body.resolution, resolved_by: row.resolved_by, resolved_at: row.resolved_at, version: row.version }, true);
    }
    throw new ReviewConflictError(
      "already_resolved",
      `this case was already resolved (${row.resolution?.replaceAll("_", " ")}) by ${row.resolved_by} at ${row.resolved_at?.toISOString()}`,
      { currentVersion: row.version, resolution: row.resolution, resolvedBy: row.resolved_by, resolvedAt: row.resolved_at?.toISOString() ?? null },
    );
  }
  if (row.version !== body.version && row.assignee !== null && row.assignee !== actor) {
    // Taken since the person loaded it: they decide again knowing who holds it.
    const assignedAt = row.assigned_at?.toISOString() ?? null;
    throw new ReviewConflictError("already_taken", `already taken by ${row.assignee} at ${assignedAt}; reload the case to see it`, {
      currentVersion: row.version,
      assignee: row.assignee,
      assignedAt,
    });
  }
  if (row.version !== body.version) {
    throw new ReviewConflictError("stale_version", `this case changed since you loaded it (version ${body.version}, now ${row.version}); reload it`, {
      currentVersion: row.version,
    });
  }
  if (row.step_state !== "indeterminate") {
    throw new ReviewConflictError("not_awaiting_review", `the step is ${row.step_state}, no longer awaiting a decision`, { currentVersion: row.version });
  }
  if (body.resolution === "confirm_not_delivered" && row.workflow_status !== "active") {
    throw new ReviewConflictError(
      "request_ended",
      `the request is ${row.workflow_status}, so a retry would never run: confirm delivered or abandon instead`,
      { currentVersion: row.version },
    );
  }
  throw new Error(`resolveReviewCase: case ${caseId} refused for no known reason`);
}
