/**
 * How a step ends. A handler must return one of these explicitly: silence (returning nothing,
 * throwing, running past the deadline) is recorded as a failure, so an audit can always tell
 * "did nothing on purpose" from "never finished". Each constructor returns its own kind, so a
 * step's result type (what `done` or `effect` carried) reaches the steps that depend on it.
 */
/** The step's effect exists (or a pure step computed its result): `result` is kept in its receipt. */
export type EffectOutcome<Result = unknown> = {
  readonly kind: "effect";
  readonly externalReference: string | null;
  readonly result: Result;
  /** How the effect was verified: the destination answered, replayed an earlier answer, or a status query found it. */
  readonly verification: "direct_response" | "idempotent_replay" | "status_query";
};

/** Nothing had to be done, and why. */
export type NoActionOutcome = { readonly kind: "no_action_needed"; readonly reason: string };

/** The step does not apply to this request, and why. */
export type SkipOutcome = { readonly kind: "skip"; readonly reason: string };

/** A step's explicit terminal outcome: an effect with its evidence, no action needed, or skip. */
export type StepOutcome<Result = unknown> = EffectOutcome<Result> | NoActionOutcome | SkipOutcome;

/**
 * What the steps that depend on a step read of it (`ctx.results.<step>`), from the outcomes its
 * handler may return: the effect's result, or `null` where it may skip or need no action.
 */
export type ResultOf<Outcome> = Outcome extends EffectOutcome<infer Result> ? Result : null;

/** What `ctx.invoke` observed at the destination, with how it was verified. */
export type ObservedResponse<Result = unknown> = {
  readonly externalReference: string | null;
  readonly result: Result;
  /** `direct_response`: the destination answered; `idempotent_replay`: it replayed an earlier answer; `status_query`: a query found the effect. */
  readonly verification: "direct_response" | "idempotent_replay" | "status_query";
};

/** The step's effect exists at the destination: conclude with what `ctx.invoke` observed. */
export const effect = <Result>(response: ObservedResponse<Result>): EffectOutcome<Result> => ({
  kind: "effect",
  externalReference: response.externalReference,
  result: response.result,
  verification: response.verification,
});

/** A pure step computed its result; nothing outside Fenceline changed. `done()` carries `null`. */
export function done(): EffectOutcome<null>;
export function done<Result>(result: Result): EffectOutcome<Result>;
export function done(result: unknown = null): EffectOutcome<unknown> {
  return { kind: "effect", externalReference: null, result, verification: "direct_response" };
}

/** Nothing had to be done (the charge was already refunded, the account already exists): say why. */
export const noActionNeeded = (reason: string): NoActionOutcome => ({ kind: "no_action_needed", reason });

/** The step does not apply to this request (no parcel to ship for a digital order): say why. */
export const skip = (reason: string): SkipOutcome => ({ kind: "skip", reason });
