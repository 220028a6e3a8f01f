/**
 * How a step ends. A handler must return one of these explicitly: silence (returning nothing,
 * throwing, running past the deadline) is recorded as a failure, so an audit can always tell
 * "did nothing on purpose" from "never finished".
 */
import type { StepConclusion } from "@/lib/engine/types";

/** A step's explicit terminal outcome: an effect with its evidence, no action needed, or skip. */
export type StepOutcome = StepConclusion;

/** What `ctx.invoke` observed at the destination, with how it was verified. */
export type ObservedResponse = {
  readonly externalReference: string | null;
  readonly result: unknown;
  /** `direct_response`: the destination answered; `idempotent_replay`: it replayed an earlier answer; `status_query`: a query found the effect. */
  readonly verification: "direct_response" | "idempotent_replay" | "status_query";
};

/** The step's effect exists at the destination: conclude with what `ctx.invoke` observed. */
export const effect = (response: ObservedResponse): StepOutcome => ({
  kind: "effect",
  externalReference: response.externalReference,
  result: response.result,
  verification: response.verification,
});

/** A pure step computed its result; nothing outside Fenceline changed. */
export const done = (result: unknown = null): StepOutcome => ({ kind: "effect", externalReference: null, result, verification: "direct_response" });

/** Nothing had to be done (the charge was already refunded, the account already exists): say why. */
export const noActionNeeded = (reason: string): StepOutcome => ({ kind: "no_action_needed", reason });

/** The step does not apply to this request (no parcel to ship for a digital order): say why. */
export const skip = (reason: string): StepOutcome => ({ kind: "skip", reason });
