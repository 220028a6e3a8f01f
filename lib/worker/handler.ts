/**
 * The step handler contract. A handler must end with an explicit outcome: an effect with its
 * evidence, `no-action-needed` with a reason, or `skip`. Returning nothing, throwing, or running
 * past the deadline is recorded as a failure, each with its own reason, so an audit can always
 * tell "did nothing on purpose" from "never finished".
 */
import type { AttemptMode } from "@/lib/engine/vocabulary";
import type { StepConclusion } from "@/lib/engine/receipt";

export type Invocation = {
  /** Stable per step: every retry of the step presents the same identity. */
  readonly requestIdentity: string;
  readonly fencingTerm: bigint;
  readonly epoch: bigint;
  readonly signal: AbortSignal;
  /** The call's own timeout: the adapter's, which always fits inside the attempt's authority. */
  readonly timeoutMs: number;
};

export type DestinationAnswer = {
  readonly externalReference: string | null;
  readonly result: unknown;
};

/** What a status query learned about the step's request identity. */
export type StatusAnswer =
  | { readonly status: "applied"; readonly externalReference: string; readonly result: unknown }
  | { readonly status: "not_found"; readonly result: unknown };

export type StatusQuery = {
  readonly requestIdentity: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
};

/**
 * Thrown to wait without holding a lease: the lease is released and the step becomes eligible
 * again after `delayMs`. The wait is not charged to the step's attempt budget.
 */
export class WaitRequested extends Error {
  constructor(
    readonly delayMs: number,
    reason: string,
  ) {
    super(reason);
    this.name = "WaitRequested";
  }
}

/** A status query found no trace of the request identity: the effect is absent. */
export class EffectAbsent extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "EffectAbsent";
  }
}

export type StepContext = {
  readonly stepId: string;
  readonly workflowId: string;
  readonly operation: string;
  readonly input: unknown;
  /** `status_query` when recovery asked to learn what happened instead of acting again. */
  readonly mode: AttemptMode;
  /** The step's request identity when an earlier attempt persisted it; null on a first try. */
  readonly requestIdentity: string | null;
  /** Fires when authority is lost or uncertain, the workflow is cancelled, or the worker stops. */
  readonly signal: AbortSignal;
  /**
   * Crosses the effect boundary: persists the request identity, records that the invocation
   * began, calls `call`, and makes the destination's answer durable before returning it.
   */
  invoke(call: (invocation: Invocation) => Promise<DestinationAnswer>): Promise<DestinationAnswer>;
  /**
   * Asks the destination what happened to the step's request identity (operation class
   * `query`; no effect). `applied` comes back for the handler to conclude with verification
   * `status_query`; `not_found` is recorded as an absent effect and ends the attempt, so that
   * recovery retries with the same identity.
   */
  query(call: (query: StatusQuery) => Promise<StatusAnswer>): Promise<Extract<StatusAnswer, { status: "applied" }>>;
};

export type StepOutcome = StepConclusion;

export type StepHandler = (context: StepContext) => Promise<StepOutcome>;

/** Handlers by adapter name; a worker claims only steps whose adapter it can run. */
export type HandlerRegistry = ReadonlyMap<string, StepHandler>;

/** Why an outcome is not a valid terminal outcome, or null when it is. */
export function invalidOutcome(outcome: unknown): string | null {
  if (outcome === undefined || outcome === null) return "handler returned nothing";
  if (typeof outcome !== "object" || !("kind" in outcome)) return "handler returned something that is not an outcome";
  const { kind } = outcome as { kind: unknown };
  if (kind === "effect") {
    const effect = outcome as { externalReference?: unknown; verification?: unknown };
    if (effect.externalReference !== null && typeof effect.externalReference !== "string") {
      return "effect outcome without an external reference (use null for none)";
    }
    if (effect.verification !== "direct_response" && effect.verification !== "idempotent_replay" && effect.verification !== "status_query") {
      return "effect outcome without a verification method";
    }
    return null;
  }
  if (kind === "no_action_needed" || kind === "skip") {
    const { reason } = outcome as { reason?: unknown };
    return typeof reason === "string" && reason.length > 0 ? null : `${kind} outcome without a reason`;
  }
  return `unknown outcome kind ${String(kind)}`;
}
