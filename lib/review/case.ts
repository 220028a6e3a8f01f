/**
 * One review case with the evidence a person needs to settle it: what was sent, each attempt in
 * plain words, late observations, other steps with the same external reference, what the
 * destination can and cannot tell us, and what the customer currently sees.
 */
import type { ReviewCaseDetail } from "@/lib/api/contract/support";
import type { StoredContract } from "@/lib/engine/contract";
import type { StaffReadable } from "@/lib/db/read-pool";
import { run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { AttemptMode, AttemptOutcome, Checkpoint, EffectObservation, WorkflowStatus } from "@/lib/engine/vocabulary";
import { referenceOf } from "@/lib/projection/project";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { summaryOf, type CaseRow } from "./queue";
import * as sql from "./sql";

type DetailRow = CaseRow & {
  evidence: Record<string, unknown>;
  resolution_note: string | null;
  external_reference: string | null;
  step_state: string;
  step_input: unknown;
  request_identity: string | null;
  attempts_started: number;
  attempt_budget: number;
  kind: string;
  workflow_status: WorkflowStatus;
  requester: string;
  workflow_created_at: Date;
};

export type AttemptRow = {
  id: string;
  fencing_term: string;
  mode: AttemptMode;
  checkpoint: Checkpoint;
  outcome: AttemptOutcome | null;
  outcome_reason: string | null;
  observed_effect: EffectObservation | null;
  external_reference: string | null;
  created_at: Date;
  invocation_began_at: Date | null;
  response_observed_at: Date | null;
  ended_at: Date | null;
};

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
  failed: "failed",
  released: "was handed back",
  lease_lost: "lost its authority (lease ended)",
};

/** One attempt in staff language: what it did, what came back, how it ended. */
export function describeAttempt(attempt: AttemptRow, number: number): string {
  const parts: string[] = [];
  if (attempt.invocation_began_at === null) {
    parts.push(`Attempt ${number} ended before calling the destination`);
  } else {
    parts.push(`Attempt ${number} ${MODE_WORDS[attempt.mode]}`);
    if (attempt.response_observed_at !== null && attempt.observed_effect === "present") {
      parts.push(`the destination answered${seconds(attempt.invocation_began_at, attempt.response_observed_at)}` +
        (attempt.external_reference ? ` with reference ${attempt.external_reference}` : ""));
    } else if (attempt.observed_effect === "absent") {
      parts.push(attempt.response_observed_at !== null ? "the destination answered that nothing was applied" : "a person confirmed nothing was applied");
    } else {
      parts.push(`no answer was observed${attempt.ended_at ? ` (gave up${seconds(attempt.invocation_began_at, attempt.ended_at)})` : ""}`);
    }
  }
  if (attempt.outcome) parts.push(`it ${ENDING_WORDS[attempt.outcome]}${attempt.outcome_reason ? `: ${attempt.outcome_reason}` : ""}`);
  return `${parts.join("; ")}.`;
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

export async function reviewCaseDetail(db: StaffReadable, caseId: string): Promise<ReviewCaseDetail> {
  const [row] = await run<DetailRow>(db, sql.readCase, [caseId]);
  if (!row) throw new NotFoundError("review case", caseId);
  const [attempts, late, [receipt], same, customerSees] = await Promise.all([
    run<AttemptRow>(db, sql.readAttempts, [row.step_id]),
    run<{ id: string; at: Date; operation: string; fencing_term: string; external_reference: string | null; result: unknown }>(db, sql.readLateObservations, [row.step_id]),
    run<{ id: string; verification_method: string; external_reference: string | null; created_at: Date }>(db, sql.readReceipt, [row.step_id]),
    run<{ step_id: string; external_reference: string; step_name: string; state: string; workflow_id: string }>(db, sql.readSameReference, [row.step_id]),
    trackingViewByWorkflowId(db, row.workflow_id),
  ]);
  const { contract } = row;
  return {
    case: {
      ...summaryOf(row),
      resolutionNote: row.resolution_note,
      externalReference: row.external_reference,
      evidence: row.evidence,
    },
    request: {
      id: row.workflow_id,
      reference: referenceOf(row.workflow_id),
      kind: row.kind,
      status: row.workflow_status,
      requester: row.requester,
      createdAt: row.workflow_created_at.toISOString(),
    },
    step: {
      id: row.step_id,
      name: row.step_name,
      adapter: row.adapter,
      operation: row.operation,
      state: row.step_state,
      sent: row.step_input,
      requestIdentity: row.request_identity,
      attemptsStarted: row.attempts_started,
      attemptBudget: row.attempt_budget,
    },
    attempts: attempts.map((attempt, index) => ({
      id: attempt.id,
      number: index + 1,
      startedAt: attempt.created_at.toISOString(),
      endedAt: attempt.ended_at?.toISOString() ?? null,
      mode: attempt.mode,
      checkpoint: attempt.checkpoint,
      outcome: attempt.outcome,
      observedEffect: attempt.observed_effect,
      externalReference: attempt.external_reference,
      summary: describeAttempt(attempt, index + 1),
    })),
    lateObservations: late.map((observation) => ({
      id: observation.id,
      at: observation.at.toISOString(),
      operation: observation.operation,
      externalReference: observation.external_reference,
      result: observation.result,
      summary:
        `Arrived from a runner that had lost its authority (term ${observation.fencing_term}) during ${observation.operation.replaceAll("_", " ")}; ` +
        `kept as evidence, not applied` + (observation.external_reference ? `. It names reference ${observation.external_reference}.` : "."),
    })),
    receipt: receipt
      ? { id: receipt.id, verificationMethod: receipt.verification_method, externalReference: receipt.external_reference, createdAt: receipt.created_at.toISOString() }
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
      name: row.adapter,
      version: row.adapter_version,
      capabilities: capabilities(contract, `${row.adapter}@${row.adapter_version}`),
      safeToRetry: contract !== null && (contract.idempotencyKeys || contract.fenceEnforcement),
    },
    customerSees,
  };
}
