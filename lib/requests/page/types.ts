/* The request's page as plain data: what lib/requests/page reads, the API answers and the page draws. */
import type { TrackingView } from "@/lib/projection/types";
import type {
  AttemptMode,
  AttemptOutcome,
  Checkpoint,
  LeaseEndReason,
  RecoveryCategory,
  RecoveryTrigger,
  RejectionReason,
  ReviewStatus,
  StepState,
  VerificationMethod,
  WorkflowStatus,
} from "@/lib/engine/vocabulary";
import type { StepWait, WaitLine } from "@/lib/waits/types";

/** A JSON value cut at a bound: `text` is its first `chars` characters when `truncated`. */
export type BoundedJson = { readonly text: string; readonly chars: number; readonly truncated: boolean };

/** One attempt under one fencing term (its lease is the same row): a bar on the timeline. */
export type AttemptBar = {
  readonly id: string;
  readonly fencingTerm: number;
  readonly epoch: number;
  readonly ownerSessionId: string;
  readonly mode: AttemptMode;
  readonly checkpoint: Checkpoint;
  /** The checkpoints with a time of their own, as ticks: created, invocation began, response observed. */
  readonly startedAt: string;
  readonly invocationBeganAt: string | null;
  readonly responseObservedAt: string | null;
  /** What the destination's answer said of the effect: present, absent, or null (no answer, or none recorded). */
  readonly observedEffect: "present" | "absent" | null;
  /** Null while the attempt runs; then the bar ends at the database's now. */
  readonly endedAt: string | null;
  readonly expiresAt: string;
  readonly outcome: AttemptOutcome | null;
  readonly outcomeReason: string | null;
  readonly endReason: LeaseEndReason | null;
  readonly externalReference: string | null;
};

export type LateObservationMark = { readonly id: number; readonly fencingTerm: number; readonly operation: string; readonly externalReference: string | null; readonly at: string };
export type RejectionMark = { readonly id: number; readonly operation: string; readonly presentedTerm: number; readonly currentTerm: number | null; readonly reason: RejectionReason; readonly at: string };
export type DecisionMark = {
  readonly id: number;
  readonly fencingTerm: number;
  readonly trigger: RecoveryTrigger;
  readonly category: RecoveryCategory;
  readonly reason: string | null;
  /** The checkpoint the attempt had reached when recovery read its evidence. */
  readonly checkpoint: string | null;
  readonly decidedAt: string;
  readonly decidedBy: string;
};

export type StepReceipt = {
  readonly id: string;
  readonly attemptId: string | null;
  readonly verificationMethod: VerificationMethod;
  readonly externalReference: string | null;
  readonly fencingTerm: number;
  readonly epoch: number;
  readonly at: string;
};

export type StepLine = {
  readonly id: string;
  readonly name: string;
  readonly position: number;
  readonly adapter: string;
  readonly operation: string;
  readonly stepClass: string;
  readonly state: StepState;
  readonly stateReason: string | null;
  readonly fencingTerm: number;
  readonly attemptsStarted: number;
  readonly attemptBudget: number;
  readonly requestIdentity: string | null;
  readonly dependsOn: string[];
  readonly createdAt: string;
  readonly completedAt: string | null;
  readonly receipt: StepReceipt | null;
  /** The receipt's observed result, bounded; null without a receipt or result. */
  readonly result: BoundedJson | null;
  readonly wait: StepWait | null;
  readonly attempts: AttemptBar[];
  readonly lateObservations: LateObservationMark[];
  readonly fencingRejections: RejectionMark[];
  readonly recoveryDecisions: DecisionMark[];
};

export type ReviewCaseLine = {
  readonly id: string;
  readonly stepId: string;
  readonly reason: string;
  readonly status: ReviewStatus;
  /** Who holds it (the case's owner); null while unassigned. */
  readonly assignee: string | null;
  readonly openedAt: string;
  readonly reviewBy: string;
  readonly resolution: string | null;
  readonly resolvedBy: string | null;
  readonly resolvedAt: string | null;
  readonly externalReference: string | null;
};

export type RequestPageData = {
  /** The database clock when this was read: the timeline's "now". */
  readonly dbNow: string;
  /** What an action sends back as the version it saw (requestVersionOf). */
  readonly version: string;
  readonly request: {
    readonly id: string;
    readonly kind: string;
    readonly kindVersion: number;
    readonly status: WorkflowStatus;
    readonly statusReason: string | null;
    /** The app (requester) that created it, and the idempotency key it came with. */
    readonly requester: string;
    readonly idempotencyKey: string | null;
    readonly trackingToken: string;
    readonly createdAt: string;
    readonly updatedAt: string;
    readonly deadlineAt: string | null;
    readonly priority: number;
    readonly concurrencyKey: string | null;
    readonly inputDigest: string;
    readonly input: BoundedJson;
  };
  /** What the customer sees on /track now. */
  readonly projection: TrackingView | null;
  readonly steps: StepLine[];
  /** Every wait of its steps (timers, event waits, child waits), in the order they began, in each room's words. */
  readonly waits: WaitLine[];
  readonly reviewCases: ReviewCaseLine[];
};

export type WebhookDeliveryLine = {
  readonly id: string;
  readonly endpointId: string;
  readonly url: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: string | null;
  readonly nextAttemptAt: string;
};

export type WebhookEventLine = { readonly id: string; readonly type: string; readonly createdAt: string; readonly preparedAt: string | null; readonly deliveries: WebhookDeliveryLine[] };
