/**
 * One review case with the evidence a person needs to settle it: what was sent, each attempt in
 * plain words, late observations, other steps with the same external reference, what the
 * destination can and cannot tell us, and what the customer currently sees.
 */
import type { ReviewCaseDetail } from "@/lib/api/contract/support";
import type { StoredContract } from "@/lib/engine/contract";
import { run, type Queryable } from "@/lib/engine/db";
import type { Attempt, PrismaClient } from "@/lib/generated/prisma/client";
import { NotFoundError } from "@/lib/engine/errors";
import { referenceOf } from "@/lib/projection/project";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { summaryOf, type CaseRow } from "./queue";
import * as sql from "./sql";
import { readUndoes } from "@/lib/compensation/read";

/** The attempt fields the case page describes, as Prisma reads them. */
export type AttemptRow = Pick<
  Attempt,
  "id" | "mode" | "checkpoint" | "outcome" | "outcomeReason" | "observedEffect" | "externalReference" | "createdAt" | "invocationBeganAt" | "responseObservedAt" | "endedAt"
>;

/**
 * The handles a case's reads run on: Prisma for the case with its step, request, attempts,
 * receipt and late observations; node-postgres for the statements that compose engine SQL (the
 * same-reference search, what the customer sees). A TestDatabase is one.
 */
export interface ReviewReadHandles {
  pool: Queryable;
  prisma: PrismaClient;
}

/** Late observations shown on a case page; the count covers them all. */
const LATE_OBSERVATION_LIMIT = 100;

const seconds = (from: Date, to: Date | null): string => (to === null ? "" : ` after ${((to.getTime() - from.getTime()) / 1000).toFixed(1)} s`);

const MODE_WORDS: Record<AttemptRow["mode"], string> = {
  execute: "sent the request",
  retry_same_identity: "sent the request again with the same request identity",
  status_query: "asked the destination what happened",
};

const ENDING_WORDS: Record<NonNullable<AttemptRow["outcome"]>, string> = {
  effect: "concluded with an effect",
  no_action_needed: "concluded that no action was needed",
  skip: "was skipped",
  waiting: "began waiting (a timer or an event)",
  failed: "failed",
  released: "was handed back",
  lease_lost: "lost its authority (lease ended)",
};

/** One attempt in staff language: what it did, what came back, how it ended. */
export function describeAttempt(attempt: AttemptRow, number: number): string {
  const parts: string[] = [];
  if (attempt.invocationBeganAt === null) {
    parts.push(`Attempt ${number} ended before calling the destination`);
  } else {
    parts.push(`Attempt ${number} ${MODE_WORDS[attempt.mode]}`);
    if (attempt.responseObservedAt !== null && attempt.observedEffect === "present") {
      parts.push(`the destination answered${seconds(attempt.invocationBeganAt, attempt.responseObservedAt)}` +
        (attempt.externalReference ? ` with reference ${attempt.externalReference}` : ""));
    } else if (attempt.observedEffect === "absent") {
      parts.push(attempt.responseObservedAt !== null ? "the destination answered that nothing was applied" : "a person confirmed nothing was applied");
    } else {
      parts.push(`no answer was observed${attempt.endedAt ? ` (gave up${seconds(attempt.invocationBeganAt, attempt.endedAt)})` : ""}`);
    }
  }
  if (attempt.outcome) parts.push(`it ${ENDING_WORDS[attempt.outcome]}${attempt.outcomeReason ? `: ${attempt.outcomeReason}` : ""}`);
  return `${parts.join("; ")}.`;
}

/** A contract as Prisma reads it, in the shape the engine stores it. */
function storedContractOf({ ratePerSecond, rateBurst, ...contract }: Omit<StoredContract, "rate"> & { ratePerSecond: number | null; rateBurst: number | null }): StoredContract {
  return { ...contract, rate: ratePerSecond === null || rateBurst === null ? null : { perSecond: ratePerSecond, burst: rateBurst } };
}

function capabilities(contract: StoredContract | null, adapter: string): ReviewCaseDetail["destination"]["capabilities"] {
  if (contract === null) {
    return [{ key: "repetition", available: false, text: `No contract is registered for ${adapter}: nothing says a repeat is safe, so only a person can decide.` }];
  }
  return [
    {
      key: "idempotencyKeys",
      available: contract.idempotencyKeys,
      text: contract.idempotencyKeys
        ? "Deduplicates by our request identity: sending again cannot apply twice."
        : "Does not deduplicate: sending again may apply a second time.",
    },
    {
      key: "statusQuery",
      available: contract.statusQuery,
      text: contract.statusQuery ? "Can be asked whether our request was applied." : "Cannot be asked what happened to our request.",
    },
    {
      key: "fenceEnforcement",
      available: contract.fenceEnforcement,
      text: contract.fenceEnforcement
        ? "Rejects requests from a runner that lost its authority."
        : "Does not check who is sending: a stale runner's call would be applied.",
    },
    {
      key: "repetition",
      available: contract.repetition !== "prohibited",
      text: {
        safe: "Repeating is always safe.",
        idempotency_protected: "A repeat is protected by the request identity.",
        reconcilable: "A repeat must be reconciled by asking the destination first.",
        prohibited: "Nothing protects a repeat: only a person can decide.",
      }[contract.repetition],
    },
  ];
}

/**
 * How support can check the destination by hand, as its adapter declared it: its page for this
 * request (the URL template with the request identity filled in, encoded) and/or its sentence.
 */
export function howToCheck(
  declared: { reviewCheckUrl: string | null; reviewInstructions: string | null } | null,
  requestIdentity: string | null,
): ReviewCaseDetail["destination"]["howToCheck"] {
  if (!declared || (declared.reviewCheckUrl === null && declared.reviewInstructions === null)) return null;
  const url = declared.reviewCheckUrl !== null && requestIdentity !== null ? declared.reviewCheckUrl.replaceAll("{requestIdentity}", encodeURIComponent(requestIdentity)) : null;
  return { url, instructions: declared.reviewInstructions };
}

/**
 * The case page's reads. The case with its step, request, attempts and receipt is one Prisma
 * query; its late observations and its adapter's contract follow by the step's keys (neither is a
 * relation: late observations outlive the rows they name, and a contract is keyed by adapter name
 * and version). Overdue compares the review-by time with this process's clock, as a badge: the
 * queue's overdue filter and the overview decide it on the database clock.
 */
export async function reviewCaseDetail({ pool, prisma }: ReviewReadHandles, caseId: string): Promise<ReviewCaseDetail> {
  const found = await prisma.reviewCase.findUnique({
    where: { id: caseId },
    select: {
      id: true, status: true, version: true, reason: true, evidence: true, openedAt: true, reviewBy: true,
      assignee: true, assignedAt: true, workflowId: true, resolution: true, resolvedBy: true, resolvedAt: true,
      resolutionNote: true, externalReference: true,
      step: {
        select: {
          id: true, name: true, adapter: true, adapterVersion: true, operation: true, state: true,
          requestIdentity: true, attemptsStarted: true, attemptBudget: true,
          workflow: { select: { kind: true, status: true, requester: true, createdAt: true, input: true } },
          attempts: {
            orderBy: { fencingTerm: "asc" },
            select: {
              id: true, mode: true, checkpoint: true, outcome: true, outcomeReason: true, observedEffect: true, externalReference: true,
              createdAt: true, invocationBeganAt: true, responseObservedAt: true, endedAt: true,
            },
          },
          receipts: { select: { id: true, verificationMethod: true, externalReference: true, createdAt: true }, take: 1 },
        },
      },
    },
  });
  if (!found) throw new NotFoundError("review case", caseId);
  const { step } = found;
  const [late, lateCount, contract, same, customerSees, undoes] = await Promise.all([
    prisma.lateObservation.findMany({
      where: { stepId: step.id },
      orderBy: { id: "asc" },
      take: LATE_OBSERVATION_LIMIT,
      select: { id: true, at: true, operation: true, fencingTerm: true, externalReference: true, result: true },
    }),
    prisma.lateObservation.count({ where: { stepId: step.id } }),
    prisma.adapterDefinition.findUnique({
      where: { name_version: { name: step.adapter, version: step.adapterVersion } },
      select: {
        name: true, version: true, externalEffect: true, idempotencyKeys: true, statusQuery: true, fenceEnforcement: true,
        repetition: true, timeoutMs: true, concurrencyLimit: true, ratePerSecond: true, rateBurst: true,
        reviewCheckUrl: true, reviewInstructions: true,
      },
    }),
    run<{ step_id: string; external_reference: string; step_name: string; state: string; workflow_id: string }>(pool, sql.readSameReference, [step.id]),
    trackingViewByWorkflowId(pool, found.workflowId),
    readUndoes(pool, [step.id]),
  ]);
  const stored = contract && storedContractOf(contract);
  const { workflow, attempts, receipts: [receipt] } = step;
  return {
    case: {
      ...summaryOf({
        id: found.id,
        status: found.status,
        version: found.version,
        reason: found.reason,
        opened_at: found.openedAt,
        review_by: found.reviewBy,
        overdue: found.status === "open" && found.reviewBy.getTime() <= Date.now(),
        assignee: found.assignee,
        assigned_at: found.assignedAt,
        workflow_id: found.workflowId,
        resolution: found.resolution,
        resolved_by: found.resolvedBy,
        resolved_at: found.resolvedAt,
        step_id: step.id,
        step_name: step.name,
        adapter: step.adapter,
        adapter_version: step.adapterVersion,
        operation: step.operation,
        contract: stored,
        attempt_count: attempts.length,
        late_observation_count: lateCount,
      }, undoes),
      resolutionNote: found.resolutionNote,
      externalReference: found.externalReference,
      evidence: found.evidence as Record<string, unknown>,
    },
    request: {
      id: found.workflowId,
      reference: referenceOf(found.workflowId),
      kind: workflow.kind,
      status: workflow.status,
      requester: workflow.requester,
      createdAt: workflow.createdAt.toISOString(),
    },
    step: {
      id: step.id,
      name: step.name,
      adapter: step.adapter,
      operation: step.operation,
      state: step.state,
      sent: workflow.input,
      requestIdentity: step.requestIdentity,
      attemptsStarted: step.attemptsStarted,
      attemptBudget: step.attemptBudget,
    },
    attempts: attempts.map((attempt, index) => ({
      id: attempt.id,
      number: index + 1,
      startedAt: attempt.createdAt.toISOString(),
      endedAt: attempt.endedAt?.toISOString() ?? null,
      mode: attempt.mode,
      checkpoint: attempt.checkpoint,
      outcome: attempt.outcome,
      observedEffect: attempt.observedEffect,
      externalReference: attempt.externalReference,
      summary: describeAttempt(attempt, index + 1),
    })),
    lateObservations: late.map((observation) => ({
      id: observation.id.toString(),
      at: observation.at.toISOString(),
      operation: observation.operation,
      externalReference: observation.externalReference,
      result: observation.result,
      summary:
        `Arrived from a runner that had lost its authority (term ${observation.fencingTerm}) during ${observation.operation.replaceAll("_", " ")}; ` +
        `kept as evidence, not applied` + (observation.externalReference ? `. It names reference ${observation.externalReference}.` : "."),
    })),
    receipt: receipt
      ? { id: receipt.id, verificationMethod: receipt.verificationMethod, externalReference: receipt.externalReference, createdAt: receipt.createdAt.toISOString() }
      : null,
    sameReference: same.map((hit) => ({
      stepId: hit.step_id,
      workflowId: hit.workflow_id,
      reference: referenceOf(hit.workflow_id),
      stepName: hit.step_name,
      state: hit.state,
      externalReference: hit.external_reference,
    })),
    destination: {
      name: step.adapter,
      version: step.adapterVersion,
      capabilities: capabilities(stored, `${step.adapter}@${step.adapterVersion}`),
      safeToRetry: contract !== null && (contract.idempotencyKeys || contract.fenceEnforcement),
      howToCheck: howToCheck(contract, step.requestIdentity),
    },
    customerSees,
  };
}
