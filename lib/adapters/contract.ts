/**
 * What an adapter promises about its destination. Recovery reads these flags, never the
 * adapter's name: the same evidence leads to the same decision for every adapter with the same
 * contract. A fencing term sent to a destination that does not check it is ceremony, so
 * `fenceEnforcement` is true only where the destination itself rejects an older (epoch, term).
 */

export type RepetitionPolicy =
  /** Repeating the call cannot change the outcome (pure computation, reads). */
  | "safe"
  /** The destination deduplicates by our request identity (idempotency key). */
  | "idempotency_protected"
  /** The destination can be asked what happened to our request identity. */
  | "reconcilable"
  /** Nothing protects a repeat: an unknown outcome goes to a person. */
  | "prohibited";

export type OperationClass = "create" | "query";

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
  readonly operationClasses: readonly OperationClass[];
};

/** Pure computation inside the worker: no external effect, always safe to repeat. */
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
  operationClasses: ["create"],
};

/**
 * The contract assumed for an adapter this process does not know. It is the most conservative
 * one: an unknown outcome goes to review, never to an automatic retry.
 */
export const unknownContract = (name: string): AdapterContract => ({
  name,
  version: "unknown",
  externalEffect: true,
  idempotencyKeys: false,
  statusQuery: false,
  fenceEnforcement: false,
  repetition: "prohibited",
  timeoutMs: 10_000,
  concurrencyLimit: 1,
  operationClasses: ["create"],
});

const contracts = new Map<string, AdapterContract>([[pureContract.name, pureContract]]);

export function registerContract(contract: AdapterContract): void {
  contracts.set(contract.name, contract);
}

export function contractFor(adapter: string): AdapterContract {
  return contracts.get(adapter) ?? unknownContract(adapter);
}
