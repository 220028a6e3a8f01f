/**
 * The reference model: SPEC.md's rules for one step per slot, with no I/O. It is the check on
 * the engine, so it states the rules itself and imports nothing from lib/engine but its
 * vocabulary: the words, never a rule.
 *
 * A slot holds one single-step workflow. Its step moves ready → leased → (completed |
 * completed_without_effect | cancelled | failed | indeterminate) and back to ready only through
 * the recovery table below. Each claim opens a lease with the next fencing term and a new
 * attempt; an attempt moves through the checkpoints created → identity_persisted →
 * invocation_began → response_observed → receipt_committed. Workers act on their own view of
 * the lease they claimed, which may be stale: the model, not the worker, knows whether that
 * lease still governs the step. Time passes only through `expire` (the lease's expiry moved
 * into the past on the database clock).
 *
 * Each destination is modelled per step by what it has applied (refs in order) and, for the
 * fenced one, the highest term it has seen.
 */
import type {
  AttemptMode,
  Checkpoint,
  EffectObservation,
  RecoveryCategory,
  RejectionReason,
  ReviewResolution,
  ReviewStatus,
  StepState as EngineStepState,
  WorkflowStatus,
} from "@/lib/engine/vocabulary";

export const KINDS = ["fenced", "idempotent", "queryable", "opaque"] as const;
export type Kind = (typeof KINDS)[number];

/** The four demo contracts, as SPEC.md's adapter section describes them. */
export const CONTRACT: Record<Kind, { idempotencyKeys: boolean; statusQuery: boolean; fence: boolean }> = {
  fenced: { idempotencyKeys: false, statusQuery: false, fence: true },
  idempotent: { idempotencyKeys: true, statusQuery: false, fence: false },
  queryable: { idempotencyKeys: false, statusQuery: true, fence: false },
  opaque: { idempotencyKeys: false, statusQuery: false, fence: false },
};

/** The states a single-step workflow's step reaches: never blocked, superseded or rejected. */
export type StepState = Exclude<EngineStepState, "blocked" | "superseded" | "rejected">;
/** Why a fenced write was refused, as the engine classifies it; the model has one epoch. */
export type Refusal = Exclude<RejectionReason, "epoch_stale" | "checkpoint_order">;

export type LeaseModel = {
  term: number;
  holder: number;
  checkpointVersion: number;
  /** Set once the lease ends; `null` while it is open. */
  ended: null | "receipt" | "expired" | "revoked";
  /** Its expiry is in the past on the database clock (the `expire` command). */
  pastExpiry: boolean;
};

export type AttemptModel = {
  term: number;
  mode: AttemptMode;
  checkpoint: Checkpoint;
  began: boolean;
  observedEffect: EffectObservation | null;
  ref: string | null;
};

/** A review case, as support sees it: open at version 1, resolved once (the version moves on). */
export type ReviewModel = { status: ReviewStatus; version: number; resolution: ReviewResolution | null; ref: string | null };

export type StepModel = {
  slot: number;
  kind: Kind;
  budget: number;
  workflow: WorkflowStatus;
  state: StepState;
  term: number;
  attemptsStarted: number;
  nextMode: AttemptMode;
  identity: string | null;
  lease: LeaseModel | null;
  attempts: AttemptModel[];
  /** External references kept as late observations (posted, or the payload of a refused write). */
  lateRefs: string[];
  receipt: null | { ref: string | null; method: string; term: number };
  /** Review cases in the order they were opened; at most one open. */
  reviews: ReviewModel[];
  decisions: RecoveryCategory[];
  /** The destination: refs of every effect it applied, in order; the highest term it saw. */
  applied: string[];
  highestTerm: number;
};

/** What worker W knows about the lease it claimed on a slot. */
export type Answer = { kind: "effect"; ref: string; replayed: boolean } | { kind: "absent" } | { kind: "unknown" } | { kind: "status"; ref: string };
export type View = {
  term: number;
  mode: AttemptMode;
  /** The request identity this worker was given (claim) or had persisted. */
  identity: string | null;
  checkpointVersion: number;
  checkpoint: Checkpoint;
  answer: Answer | null;
  /** The answer is durable: observe_response / observe_effect_absent was accepted. */
  recorded: boolean;
  /** A refusal told this worker it lost authority. */
  lost: boolean;
  /** It posted its answer as a late observation. */
  posted: boolean;
};

/** Views per slot, oldest first: a worker process may still run an attempt of a lease it lost and re-claimed. */
export type WorkerModel = { paused: boolean; views: Record<number, View[]> };

export const SLOTS = 2;
export const WORKERS = 3;

export class Model {
  steps: (StepModel | null)[] = Array.from({ length: SLOTS }, () => null);
  workers: WorkerModel[] = Array.from({ length: WORKERS }, () => ({ paused: false, views: {} }));
  rejections = 0;

  clone(): Model {
    const copy = new Model();
    copy.steps = structuredClone(this.steps);
    copy.workers = structuredClone(this.workers);
    copy.rejections = this.rejections;
    return copy;
  }

  replaceWith(other: Model): void {
    this.steps = other.steps;
    this.workers = other.workers;
    this.rejections = other.rejections;
  }

  step(slot: number): StepModel {
    const step = this.steps[slot];
    if (!step) throw new Error(`model: slot ${slot} is empty`);
    return step;
  }

  /** The view of worker's lease on slot: by term, or by age (0 the latest claim, 1 the one before). */
  view(worker: number, slot: number, which: { term: number } | { age: number } = { age: 0 }): View | undefined {
    const views = this.workers[worker]!.views[slot] ?? [];
    return "term" in which ? views.find((v) => v.term === which.term) : views[views.length - 1 - which.age];
  }
}

export function newStep(slot: number, kind: Kind, budget: number): StepModel {
  return {
    slot, kind, budget, workflow: "active", state: "ready", term: 0, attemptsStarted: 0, nextMode: "execute",
    identity: null, lease: null, attempts: [], lateRefs: [], receipt: null, reviews: [], decisions: [],
    applied: [], highestTerm: 0,
  };
}

export const currentAttempt = (step: StepModel): AttemptModel | undefined => step.attempts.find((a) => a.term === step.term);

/**
 * SPEC "Checkpoints and recovery": a write is accepted only if the step's current term equals the
 * attempt's, the owner matches, the lease is open and unexpired, and the workflow is active.
 * Returns why it is refused, or null.
 */
export function refusal(step: StepModel, worker: number, term: number): Refusal | null {
  if (step.term > term) return "superseded";
  const lease = step.lease!;
  if (lease.holder !== worker) return "not_owner";
  if (lease.ended === "expired" || lease.ended === "revoked") return lease.ended;
  if (lease.ended !== null) return "lease_ended";
  if (lease.pastExpiry) return "expired";
  if (step.workflow !== "active") return "workflow_inactive";
  return null;
}

const began = (attempt: AttemptModel) => attempt.began;

/**
 * SPEC's recovery table, for a lease that ended without a receipt (expired or revoked):
 *
 * | evidence                                               | decision                          |
 * | receipt exists                                         | acknowledge                       |
 * | observed references (attempt's + late) disagree        | review (integrity conflict)       |
 * | one observed reference                                 | reconcile into a receipt          |
 * | effect impossible (not begun, or destination said no) | stop if cancelled / out of budget |
 * |   … and an earlier call's outcome is unknown           |   (a stop goes to review)         |
 * |   status query that got no answer                      | status query again                |
 * |   no identity persisted                                | make ready                        |
 * |   identity persisted                                   | retry with the same identity      |
 * | outcome unknown: workflow inactive or budget spent     | review                            |
 * |   destination can be queried (and has no keys)        | status query                      |
 * |   destination enforces the fence                       | retry with the same identity      |
 * |   destination honours idempotency keys                 | retry with the same key           |
 * |   destination opaque                                   | review                            |
 */
export function decide(step: StepModel): { category: RecoveryCategory; nextMode?: AttemptMode; endAs?: "cancelled" | "failed"; ref?: string } {
  const attempt = currentAttempt(step)!;
  if (step.receipt) return { category: "acknowledge" };

  const refs = new Set(step.lateRefs);
  if (attempt.checkpoint === "response_observed" && attempt.ref !== null) refs.add(attempt.ref);
  if (refs.size > 1) return { category: "review" };
  if (refs.size === 1) return { category: "reconcile", ref: [...refs][0]! };

  const outOfBudget = step.attemptsStarted >= step.budget;
  const earlierUnknown = step.attempts.some((a) => a.term < attempt.term && began(a) && a.observedEffect === null);
  const effectPossible = began(attempt) && attempt.observedEffect !== "absent";

  if (!effectPossible) {
    if (step.workflow !== "active" || outOfBudget) {
      if (earlierUnknown) return { category: "review" };
      return { category: "give_up", endAs: step.workflow === "active" ? "failed" : "cancelled" };
    }
    if (attempt.mode === "status_query" && attempt.observedEffect === null) return { category: "status_query", nextMode: "status_query" };
    if (step.identity === null) return { category: "make_ready", nextMode: attempt.mode };
    return { category: "retry_same_identity", nextMode: "retry_same_identity" };
  }

  if (step.workflow !== "active" || outOfBudget) return { category: "review" };
  const contract = CONTRACT[step.kind];
  if (contract.statusQuery && (attempt.mode === "status_query" || !contract.idempotencyKeys)) {
    return { category: "status_query", nextMode: "status_query" };
  }
  if (contract.fence) return { category: "retry_same_identity", nextMode: "retry_same_identity" };
  if (contract.idempotencyKeys) return { category: "retry_same_key", nextMode: "retry_same_identity" };
  return { category: "review" };
}

/** Ends the step's open lease (`why`) and carries out the recovery decision. */
export function recover(step: StepModel, why: "expired" | "revoked"): RecoveryCategory {
  step.lease!.ended = why;
  const decision = decide(step);
  step.decisions.push(decision.category);
  switch (decision.category) {
    case "make_ready":
    case "retry_same_identity":
    case "retry_same_key":
    case "status_query":
      step.state = "ready";
      step.nextMode = decision.nextMode!;
      break;
    case "review":
      step.state = "indeterminate";
      step.reviews.push({ status: "open", version: 1, resolution: null, ref: null });
      break;
    case "give_up":
      step.state = decision.endAs!;
      if (decision.endAs === "failed" && step.workflow === "active") step.workflow = "failed";
      break;
    case "reconcile":
      complete(step, { ref: decision.ref!, method: "direct_response", term: step.term }, "completed");
      break;
    case "acknowledge":
      break;
  }
  return decision.category;
}

export function complete(step: StepModel, receipt: NonNullable<StepModel["receipt"]>, state: "completed" | "completed_without_effect"): void {
  step.receipt = receipt;
  step.state = state;
  if (step.workflow === "active") step.workflow = "completed";
}

/**
 * The destination's contract, answering a create under (identity, term). `fault`: "ok" answers,
 * "fail" refuses definitely (nothing applied), "drop" applies and loses the answer.
 */
export function destinationCreate(step: StepModel, term: number, fault: "ok" | "fail" | "drop"): Answer {
  if (fault === "fail") return { kind: "absent" };
  let ref: string;
  let replayed = false;
  if (step.kind === "fenced") {
    if (term < step.highestTerm) return { kind: "absent" }; // stale term rejected, nothing applied
    step.highestTerm = term;
  }
  if ((step.kind === "fenced" || step.kind === "idempotent") && step.applied.length > 0) {
    ref = step.applied[0]!;
    replayed = true;
  } else {
    ref = `s${step.slot}#${step.applied.length + 1}`;
    step.applied.push(ref);
  }
  return fault === "drop" ? { kind: "unknown" } : { kind: "effect", ref, replayed };
}

/** The queryable destination's status by client reference: the first application, if any. */
export function destinationStatus(step: StepModel): Answer {
  const first = step.applied[0];
  return first === undefined ? { kind: "absent" } : { kind: "status", ref: first };
}

/** What a person sends to resolve a case: the decision and the case version they saw. */
export type ResolutionBody = { resolution: ReviewResolution; version: number; ref: string | null };
export type ResolutionOutcome = { resolution: ReviewResolution; version: number; replayed: boolean } | { refused: string };

/**
 * SPEC "Support staff": a person settles case `index` of the step. One guarded transition (case
 * open, version as seen, step indeterminate, and for a retry an active request), recorded on the
 * case; a repeat of the same resolution is a replay that changes nothing; anything else is refused
 * with the reason a person would be shown.
 *
 *   confirm delivered      a receipt verified by manual review, on the latest attempt, with the
 *                          reference the person found; the step completes
 *   confirm not delivered  the step is ready again to retry with the same request identity, with
 *                          budget for one more try; every unanswered call is marked effect absent
 *   abandon                the step fails, and an active request fails with it
 */
export function resolveCase(step: StepModel, index: number, body: ResolutionBody): ResolutionOutcome {
  const review = step.reviews[index]!;
  const applies =
    review.status === "open" && review.version === body.version && step.state === "indeterminate" &&
    (body.resolution !== "confirm_not_delivered" || step.workflow === "active");
  if (applies) {
    review.status = "resolved";
    review.resolution = body.resolution;
    review.version += 1;
    switch (body.resolution) {
      case "confirm_delivered":
        review.ref = body.ref;
        complete(step, { ref: body.ref, method: "manual_review", term: step.term }, "completed");
        break;
      case "confirm_not_delivered":
        step.state = "ready";
        step.nextMode = "retry_same_identity";
        step.budget = Math.max(step.budget, step.attemptsStarted + 1);
        for (const attempt of step.attempts) if (attempt.began && attempt.observedEffect === null) attempt.observedEffect = "absent";
        break;
      case "abandon":
        step.state = "failed";
        if (step.workflow === "active") step.workflow = "failed";
        break;
    }
    return { resolution: body.resolution, version: review.version, replayed: false };
  }
  if (review.status === "resolved") {
    const same = review.resolution === body.resolution && (body.resolution !== "confirm_delivered" || review.ref === body.ref);
    return same ? { resolution: body.resolution, version: review.version, replayed: true } : { refused: "already_resolved" };
  }
  if (review.version !== body.version) return { refused: "stale_version" };
  if (step.state !== "indeterminate") return { refused: "not_awaiting_review" };
  return { refused: "request_ended" };
}
