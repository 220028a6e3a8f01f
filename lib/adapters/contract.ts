/**
 * What an adapter promises about its destination. Recovery reads these flags, never the
 * adapter's name: the same evidence leads to the same decision for every adapter with the same
 * contract. A fencing term sent to a destination that does not check it is ceremony, so
 * `fenceEnforcement` is true only where the destination itself rejects an older (epoch, term).
 *
 * Contracts reach the engine as data: a worker registers the adapters it serves (their
 * contracts are stored with their name and version), and recovery, review and the projection
 * read them from PostgreSQL beside the step they decide.
 */

import { REPETITION_POLICIES } from "@/lib/engine/vocabulary";

/**
 * - `safe`: repeating the call cannot change the outcome (pure computation, reads);
 * - `idempotency_protected`: the destination deduplicates by our request identity, or rejects a
 *   stale fencing term itself;
 * - `reconcilable`: the destination can be asked what happened to our request identity;
 * - `prohibited`: nothing protects a repeat, so an unknown outcome goes to a person.
 */
export type RepetitionPolicy = (typeof REPETITION_POLICIES)[number];

export type OperationClass = "create" | "query";

/**
 * A destination's declared rate, enforced by the database at the permit across every worker:
 * at most `perSecond` calls start in any one second (each call slot is used at most once per
 * window of a second plus a margin for calls that start late), and at most `burst` of them at
 * once, the rest spaced 1/perSecond apart.
 */
export type AdapterRate = { readonly perSecond: number; readonly burst: number };

/** An adapter's registered contract: its promises with its limits, as recovery reads them and the dashboard shows them. */
export type AdapterContract = {
  readonly name: string;
  readonly version: string;
  /** False for pure steps: nothing outside Fenceline's database changes. */
  readonly externalEffect: boolean;
  readonly idempotencyKeys: boolean;
  readonly statusQuery: boolean;
  readonly fenceEnforcement: boolean;
  readonly repetition: RepetitionPolicy;
  /** One call's wait; must be shorter than the attempt deadline of any step class that uses it. */
  readonly timeoutMs: number;
  readonly concurrencyLimit: number;
  /** Null when the destination declares no rate. */
  readonly rate: AdapterRate | null;
  readonly operationClasses: readonly OperationClass[];
};

/** The built-in adapter of pure steps: computation inside the worker, always safe to repeat. */
export const pureContract: AdapterContract = {
  name: "pure",
  version: "1",
  externalEffect: false,
  idempotencyKeys: false,
  statusQuery: false,
  fenceEnforcement: false,
  repetition: "safe",
  timeoutMs: 10_000,
  concurrencyLimit: 1_000,
  rate: null,
  operationClasses: ["create"],
};
