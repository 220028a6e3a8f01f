import type { AuthorityLostError } from "./errors";
import type { AttemptMode, RenewalRefusalReason, VerificationMethod } from "./vocabulary";

/** What a worker presents to prove authority: the step, the fencing term it holds, its session. */
export type LeaseHandle = {
  readonly stepId: string;
  readonly fencingTerm: bigint;
  readonly sessionId: string;
};

export type ClaimedStep = {
  readonly stepId: string;
  readonly workflowId: string;
  /** The workflow kind and version the request pinned, and the step's name in that definition. */
  readonly kind: string;
  readonly workflowVersion: number;
  readonly stepName: string;
  readonly attemptId: string;
  readonly fencingTerm: bigint;
  readonly epoch: bigint;
  readonly mode: AttemptMode;
  /** Set when an earlier attempt already persisted the step's request identity. */
  readonly requestIdentity: string | null;
  /** The request's input, as it was validated and stored. */
  readonly input: unknown;
  /** The results in the receipts of the steps this one depends on, by step name. */
  readonly dependencyResults: Readonly<Record<string, unknown>>;
  /** The external references in those same receipts (null where the destination gave none), by step name. */
  readonly dependencyReferences: Readonly<Record<string, string | null>>;
  readonly inputDigest: string;
  readonly adapter: string;
  readonly adapterVersion: string;
  readonly operation: string;
  readonly stepClass: string;
  readonly attemptsStarted: number;
  readonly attemptBudget: number;
  readonly leaseTtlMs: number;
  readonly renewEveryMs: number;
  /** The step class's attempt deadline: how long one attempt's authority may last in all. */
  readonly attemptDeadlineMs: number;
  /** Time kept after the last possible expiry (deadline − grace) to record a timeout observation. */
  readonly graceMs: number;
  readonly deadlineAt: Date;
  readonly expiresAt: Date;
  readonly checkpointVersion: number;
  /** The database clock when the claim committed; expiresAt − dbNow is the authority remaining. */
  readonly dbNow: Date;
  /** The step's earlier attempts that gave it back to wait (`ctx.wait`, a rate limit, no capacity). */
  readonly waits: StepWaits;
  /** The W3C traceparent the request was created under: the attempt's spans are its children. Null outside a trace. */
  readonly traceParent: string | null;
};

/** How often a step has waited so far, and since when (database clock); no waits: count 0, times null. */
export type StepWaits = {
  readonly count: number;
  /** When the first wait began (its attempt gave the step back). */
  readonly firstAt: Date | null;
  /** When the latest wait began. */
  readonly lastAt: Date | null;
};

/** The reason a worker gives when it hands a step back to wait; the waits a step took are counted by it. */
export const WAIT_RELEASE_PREFIX = "waiting: ";

export type RenewRequest = LeaseHandle & { readonly checkpointVersion: number };

export type RenewResult =
  | { readonly stepId: string; readonly renewed: true; readonly expiresAt: Date; readonly dbNow: Date }
  | { readonly stepId: string; readonly renewed: false; readonly reason: RenewalRefusalReason };

/** A workflow kind at one version: what a worker serves and a request pins. */
export type WorkflowVersion = { readonly kind: string; readonly version: number };

export type CheckpointAck = {
  /** The lease's new checkpoint version; renewals must present it. */
  readonly checkpointVersion: number;
};

export type ReleaseOptions = {
  /** The step becomes eligible again this long from now: a wait that holds no lease. */
  readonly delayMs?: number;
  /** The invocation began, but the destination answered that it applied nothing. */
  readonly effectAbsent?: boolean;
};

export type LateObservation = {
  readonly operation: string;
  readonly externalReference: string | null;
  readonly result: unknown;
};

export type PermitRequest = {
  readonly adapter: string;
  readonly operationClass: "create" | "query";
  readonly limit: number;
  /** How long the permit lasts if its holder vanishes: the call's timeout plus a margin. */
  readonly ttlMs: number;
  readonly requestIdentity: string | null;
};

export type Permit = {
  readonly permitId: string;
  readonly expiresAt: Date;
  /** The call took one of its destination's call slots (a declared rate): it must start at once, or not at all. */
  readonly rated: boolean;
};

export type PermitRefusal = {
  /**
   * When a permit can be had: for a rate, when the next call slot opens; for capacity, when it can
   * free up (null while some permit is active: calls end quickly).
   */
  readonly waitMs: number | null;
  /** What is missing: the destination's rate allows no call now, or its calls in flight are at their limit. */
  readonly reason: "rate" | "capacity";
};

/** The explicit terminal outcome a handler returns; silence is reserved for failure. */
export type StepConclusion =
  | {
      readonly kind: "effect";
      readonly externalReference: string | null;
      readonly result: unknown;
      readonly verification: Extract<VerificationMethod, "direct_response" | "idempotent_replay" | "status_query">;
    }
  | { readonly kind: "no_action_needed"; readonly reason: string }
  | { readonly kind: "skip"; readonly reason: string };

export type ReceiptRequest = { readonly lease: LeaseHandle; readonly conclusion: StepConclusion };

export type ReceiptResult =
  | { readonly stepId: string; readonly committed: true; readonly receiptId: string }
  | { readonly stepId: string; readonly committed: false; readonly error: AuthorityLostError };


/** What a wait step's attempt asks for when it parks: its room's name and the room's request, as plain data. */
export type WaitRequest = { readonly room: string; readonly request: unknown };

/** What arming a wait recorded: the room's detail (a timer's due time, an event wait's one-time URL path). */
export type ArmedWait = {
  readonly room: string;
  /** The step settled while arming (an event that had already arrived). */
  readonly settled: boolean;
  /** When the wait is next due on the database clock (a timer's time, a timeout), or null. */
  readonly dueAt: Date | null;
  readonly detail: Readonly<Record<string, unknown>>;
};
