/**
 * The worker's side of the step handler contract (lib/definitions/context.ts): the signals a
 * handler's context raises to the runtime, and the check that a handler ended with an explicit
 * outcome. Returning nothing, throwing, or running past the deadline is recorded as a failure,
 * each with its own reason, so an audit can always tell "did nothing on purpose" from "never
 * finished".
 */

/**
 * Raised by `ctx.wait`, and by the runtime when a destination rate-limits or has no free
 * capacity: the lease is released and the step becomes eligible again after `delayMs`. The
 * wait is not charged to the step's attempt budget.
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
