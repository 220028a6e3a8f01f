/**
 * SPEC's recovery table as a pure function: durable evidence in, one decision out.
 *
 * An expired (or revoked, or failed) lease opens this decision; it is never the decision itself.
 * The rules read, in order: is there already a receipt; did anyone observe the destination's
 * answer (this attempt's own checkpoint, or late observations from stale workers); did the
 * invocation begin; and, if it did, what the adapter's contract lets us do about not knowing.
 * Nothing here flips an ambiguous step straight back to ready.
 */
import type { AdapterContract } from "@/lib/adapters/contract";
import type { AttemptMode, Checkpoint, EffectObservation, RecoveryTrigger, WorkflowStatus } from "./vocabulary";

export type LateObservationEvidence = {
  readonly id: string;
  readonly requestIdentity: string | null;
  readonly externalReference: string;
};

export type RecoveryEvidence = {
  readonly trigger: RecoveryTrigger;
  readonly checkpoint: Checkpoint;
  readonly mode: AttemptMode;
  readonly requestIdentity: string | null;
  /** The external reference this attempt durably observed (checkpoint 4), if any. */
  readonly observedExternalReference: string | null;
  /**
   * What the destination told this attempt about its effect: present (it answered with a
   * result), absent (it answered that nothing was applied, or a status query found nothing),
   * or null (no answer was observed).
   */
  readonly observedEffect: EffectObservation | null;
  /** An earlier attempt of this step began an invocation whose effect was never observed. */
  readonly earlierOutcomeUnknown: boolean;
  readonly receiptExists: boolean;
  readonly lateObservations: readonly LateObservationEvidence[];
  /** The adapter the step runs on. */
  readonly adapter: { readonly name: string; readonly version: string };
  /**
   * Its registered contract, or null when none is registered for that name and version: an
   * unknown contract promises nothing, so an unknown outcome goes to a person.
   */
  readonly contract: AdapterContract | null;
  readonly attemptsStarted: number;
  readonly attemptBudget: number;
  readonly workflowStatus: WorkflowStatus;
  readonly workflowDeadlinePassed: boolean;
  /**
   * The step undoes another's effect (lib/compensation). Running out of budget then goes to a
   * person, never to a failure: a request must not read as undone while an undo is not.
   */
  readonly undoesStep?: boolean;
};

export type RecoveryDecision =
  | { readonly category: "acknowledge" }
  | {
      readonly category: "reconcile";
      readonly externalReference: string | null;
      /** Where the evidence came from: this attempt's checkpoint or a late observation. */
      readonly source: "attempt" | "late_observation";
    }
  | { readonly category: "review"; readonly reason: string }
  | {
      readonly category: "make_ready" | "retry_same_identity" | "retry_same_key" | "status_query";
      readonly nextMode: AttemptMode;
    }
  | { readonly category: "give_up"; readonly stepState: "failed" | "cancelled"; readonly reason: string };

const invocationBegan = (checkpoint: Checkpoint): boolean =>
  checkpoint === "invocation_began" || checkpoint === "response_observed" || checkpoint === "receipt_committed";

export function decideRecovery(evidence: RecoveryEvidence): RecoveryDecision {
  if (evidence.receiptExists) return { category: "acknowledge" };

  const observed = decideFromObservations(evidence);
  if (observed) return observed;

  // The destination said nothing was applied: as safe as never having called it.
  if (evidence.observedEffect === "absent" || !invocationBegan(evidence.checkpoint)) return decideBeforeInvocation(evidence);
  return decideAfterInvocation(evidence);
}

/** Observations of the destination's answer settle the step, unless they disagree. */
function decideFromObservations(evidence: RecoveryEvidence): RecoveryDecision | null {
  const relevant = evidence.lateObservations.filter(
    (observation) =>
      evidence.requestIdentity === null ||
      observation.requestIdentity === null ||
      observation.requestIdentity === evidence.requestIdentity,
  );
  const references = new Set(relevant.map((observation) => observation.externalReference));
  if (evidence.observedExternalReference !== null) references.add(evidence.observedExternalReference);

  if (references.size > 1) {
    return {
      category: "review",
      reason: `integrity conflict: observed external references disagree (${[...references].sort().join(", ")})`,
    };
  }
  const [reference] = references;
  if (reference === undefined) {
    // An effect answered without a reference is still an observed effect.
    return evidence.observedEffect === "present" ? { category: "reconcile", externalReference: null, source: "attempt" } : null;
  }
  return {
    category: "reconcile",
    externalReference: reference,
    source: evidence.observedExternalReference !== null ? "attempt" : "late_observation",
  };
}

/** Why a compensation that spent its budget is under review. */
export const UNDO_BUDGET_SPENT = "compensation failed past its attempt budget: the effect it undoes is still in place";

function decideBeforeInvocation(evidence: RecoveryEvidence): RecoveryDecision {
  const stop = reasonToStop(evidence);
  // An undo that cannot run again leaves its request in review, never ended as if undone.
  if (stop?.reason === UNDO_BUDGET_SPENT) return { category: "review", reason: UNDO_BUDGET_SPENT };
  if (stop) {
    // Stopping is only silent when no earlier call may have acted; otherwise a person decides.
    if (evidence.earlierOutcomeUnknown && (evidence.contract?.externalEffect ?? true)) {
      return { category: "review", reason: `${stop.reason} while an earlier attempt's outcome is unknown` };
    }
    return stop;
  }
  // A status query that got no answer asks again; one that found nothing leads to a retry.
  if (evidence.mode === "status_query" && evidence.observedEffect === null) return { category: "status_query", nextMode: "status_query" };
  if (evidence.checkpoint === "created" && evidence.requestIdentity === null) {
    return { category: "make_ready", nextMode: evidence.mode };
  }
  return { category: "retry_same_identity", nextMode: "retry_same_identity" };
}

function decideAfterInvocation(evidence: RecoveryEvidence): RecoveryDecision {
  const { contract } = evidence;
  if (contract === null) {
    return {
      category: "review",
      reason: `outcome unknown: no contract is registered for adapter ${evidence.adapter.name}@${evidence.adapter.version}, so nothing says a repeat is safe`,
    };
  }
  if (!contract.externalEffect) {
    return reasonToStop(evidence) ?? { category: "make_ready", nextMode: "execute" };
  }

  // From here the destination may or may not have acted: the outcome is unknown, so running out
  // of time or budget leads to a person, never to a silent failure.
  if (evidence.workflowStatus !== "active") {
    return { category: "review", reason: `workflow ${evidence.workflowStatus} while the outcome is unknown` };
  }
  if (evidence.workflowDeadlinePassed || evidence.attemptsStarted >= evidence.attemptBudget) {
    return { category: "review", reason: "outcome unknown and the attempt budget or deadline is spent" };
  }
  if (contract.statusQuery && (evidence.mode === "status_query" || !contract.idempotencyKeys)) {
    return { category: "status_query", nextMode: "status_query" };
  }
  if (contract.fenceEnforcement) {
    // The destination rejects the stale term itself, so a newer term may try again.
    return { category: "retry_same_identity", nextMode: "retry_same_identity" };
  }
  if (contract.idempotencyKeys) return { category: "retry_same_key", nextMode: "retry_same_identity" };
  return {
    category: "review",
    reason: "outcome unknown: the destination neither deduplicates nor answers status queries",
  };
}

/** Reasons a step whose invocation never began ends here instead of running again. */
function reasonToStop(evidence: RecoveryEvidence): Extract<RecoveryDecision, { category: "give_up" }> | null {
  if (evidence.workflowStatus === "cancelled") {
    return { category: "give_up", stepState: "cancelled", reason: "workflow cancelled" };
  }
  if (evidence.workflowStatus !== "active") {
    return { category: "give_up", stepState: "cancelled", reason: `workflow ${evidence.workflowStatus}` };
  }
  if (evidence.workflowDeadlinePassed) {
    return { category: "give_up", stepState: "failed", reason: "workflow deadline passed" };
  }
  if (evidence.attemptsStarted >= evidence.attemptBudget) {
    if (evidence.undoesStep) return { category: "give_up", stepState: "failed", reason: UNDO_BUDGET_SPENT };
    return { category: "give_up", stepState: "failed", reason: "attempt budget exhausted" };
  }
  return null;
}
