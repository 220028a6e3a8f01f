/**
 * In-memory destinations, one per contract a destination can promise, that record every call
 * and every effect: a test asserts "exactly one charge" on `effects`. Each comes with an adapter
 * that declares its contract truthfully; an adopter's own adapter can call `apply` and `query`
 * instead, to keep its own payload mapping under test.
 *
 *  - fenced      remembers the highest (epoch, term) per resource and rejects an older one;
 *                a newer term's write replaces the resource's state (no second effect)
 *  - idempotent  deduplicates by request identity: a repeat gets the first answer, replayed
 *  - queryable   applies every call; answers "what happened to this request identity?"
 *  - opaque      applies every call and promises nothing
 */
import { StaleTermRejected } from "@/lib/adapters/call-outcome";
import { defineAdapter, type AdapterAnswer, type AdapterCall, type AdapterDefinition, type AdapterPromises, type AdapterStatusAnswer } from "@/lib/definitions/adapter";

/** The four destination contracts. */
export type DestinationContract = "fenced" | "idempotent" | "queryable" | "opaque";

/** One effect a fake destination applied. */
export type RecordedEffect<Payload = unknown> = {
  /** The destination's id for it: the receipt's external reference. */
  readonly externalReference: string;
  readonly requestIdentity: string;
  readonly payload: Payload;
  readonly epoch: bigint;
  readonly fencingTerm: bigint;
};

/** One call a fake destination received, and what it did with it. */
export type RecordedCall<Payload = unknown> = {
  readonly requestIdentity: string;
  readonly payload: Payload;
  readonly epoch: bigint;
  readonly fencingTerm: bigint;
  readonly outcome: "applied" | "replayed" | "replaced" | "stale_term_rejected";
};

/** How a fake destination names itself and its adapter. */
export type FakeDestinationOptions<Payload> = {
  /** The adapter's name; also the prefix of external references. */
  readonly name: string;
  readonly version?: string;
  readonly timeoutMs?: number;
  readonly concurrencyLimit?: number;
  /** What a fenced destination fences: one resource per request identity unless this says otherwise. */
  readonly resourceOf?: (payload: Payload, requestIdentity: string) => string;
};

/** A fake destination and the adapter that calls it. */
export type FakeDestination<Payload = unknown> = {
  readonly contract: DestinationContract;
  /** An adapter declaring this destination's contract, calling `apply` and `query`. */
  readonly adapter: AdapterDefinition<Payload>;
  /** Every effect applied, once each, in order. */
  readonly effects: readonly RecordedEffect<Payload>[];
  /** Every call received, in order. */
  readonly calls: readonly RecordedCall<Payload>[];
  /** Receives a call as the destination would; throws StaleTermRejected for an older term at a fenced one. */
  apply(call: Pick<AdapterCall<Payload>, "payload" | "requestIdentity" | "epoch" | "fencingTerm">): AdapterAnswer;
  /** What the destination knows of a request identity (queryable destinations answer this). */
  query(requestIdentity: string): AdapterStatusAnswer;
  /** Forgets every call and effect. */
  reset(): void;
};

const PROMISES: Record<DestinationContract, AdapterPromises> = {
  fenced: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: true, repetition: "idempotency_protected" },
  idempotent: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  queryable: { idempotencyKeys: false, statusQuery: true, fenceEnforcement: false, repetition: "reconcilable" },
  opaque: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: false, repetition: "prohibited" },
};

const newer = (a: { epoch: bigint; fencingTerm: bigint }, b: { epoch: bigint; fencingTerm: bigint }) =>
  a.epoch > b.epoch || (a.epoch === b.epoch && a.fencingTerm >= b.fencingTerm);

/** An in-memory destination with the given contract that records every call and effect. */
export function fakeDestination<Payload = unknown>(contract: DestinationContract, options: FakeDestinationOptions<Payload>): FakeDestination<Payload> {
  const effects: RecordedEffect<Payload>[] = [];
  const calls: RecordedCall<Payload>[] = [];
  /** Fenced: the resource's effect and the newest term it accepted. */
  const resources = new Map<string, { effect: RecordedEffect<Payload>; epoch: bigint; fencingTerm: bigint }>();
  const byIdentity = new Map<string, RecordedEffect<Payload>>();
  const resourceOf = options.resourceOf ?? ((_payload: Payload, requestIdentity: string) => requestIdentity);

  const record = (call: Omit<RecordedCall<Payload>, "outcome">, outcome: RecordedCall<Payload>["outcome"]) => calls.push({ ...call, outcome });
  const applyNew = (call: Omit<RecordedCall<Payload>, "outcome">): RecordedEffect<Payload> => {
    const effect = { ...call, externalReference: `${options.name}_${effects.length + 1}` };
    effects.push(effect);
    byIdentity.set(call.requestIdentity, effect);
    record(call, "applied");
    return effect;
  };

  const apply: FakeDestination<Payload>["apply"] = ({ payload, requestIdentity, epoch, fencingTerm }) => {
    const call = { payload, requestIdentity, epoch, fencingTerm };
    if (contract === "idempotent") {
      const earlier = byIdentity.get(requestIdentity);
      if (earlier) {
        record(call, "replayed");
        return { externalReference: earlier.externalReference, result: { payload: earlier.payload }, replayed: true };
      }
    }
    if (contract === "fenced") {
      const resource = resourceOf(payload, requestIdentity);
      const held = resources.get(resource);
      if (held && !newer(call, held)) {
        record(call, "stale_term_rejected");
        throw new StaleTermRejected(options.name, held.epoch, held.fencingTerm);
      }
      if (held) {
        resources.set(resource, { effect: held.effect, epoch, fencingTerm });
        record(call, "replaced");
        return { externalReference: held.effect.externalReference, result: { payload } };
      }
      const effect = applyNew(call);
      resources.set(resource, { effect, epoch, fencingTerm });
      return { externalReference: effect.externalReference, result: { payload } };
    }
    const effect = applyNew(call);
    return { externalReference: effect.externalReference, result: { payload } };
  };

  const query = (requestIdentity: string): AdapterStatusAnswer => {
    const effect = byIdentity.get(requestIdentity);
    return effect ? { status: "applied", externalReference: effect.externalReference, result: { payload: effect.payload } } : { status: "not_found" };
  };

  const adapter = defineAdapter<Payload>({
    name: options.name,
    version: options.version ?? "1",
    contract: PROMISES[contract],
    timeoutMs: options.timeoutMs ?? 5_000,
    concurrencyLimit: options.concurrencyLimit ?? 10,
    invoke: async (call) => apply(call),
    ...(contract === "queryable" ? { query: async ({ requestIdentity }: { requestIdentity: string }) => query(requestIdentity) } : {}),
  });

  return {
    contract,
    adapter,
    effects,
    calls,
    apply,
    query,
    reset: () => {
      effects.length = 0;
      calls.length = 0;
      resources.clear();
      byIdentity.clear();
    },
  };
}
