/**
 * The demo's four adapters: one per destination of the synthetic destination service, each with
 * the contract that destination really keeps. Written against the public package only, as an
 * adopter writes theirs.
 *
 *   fenced      rejects an older (epoch, term) per resource itself, and binds a request identity
 *               to its first effect there, so a retry under a newer term replays
 *   idempotent  deduplicates by Idempotency-Key; ignores terms
 *   queryable   applies every create, but answers status queries by client reference
 *   opaque      applies every create and can tell nothing afterwards
 *
 * A call ends in an answer, or in a typed error that says what the caller may conclude:
 * StaleTermRejected, RateLimited and DefiniteFailure mean nothing was applied; UnknownOutcome
 * means it may or may not have been.
 */
import {
  defineAdapter,
  DefiniteFailure,
  RateLimited,
  StaleTermRejected,
  UnknownOutcome,
  type AdapterAnswer,
  type AdapterCall,
  type AdapterDefinition,
  type AdapterStatusAnswer,
} from "fenceline";

const TIMEOUT_MS = 5_000;
const CONCURRENCY_LIMIT = 8;

/** What a step sends: the effect's content, and for the fenced destination the resource it writes. */
export type DestinationPayload = { readonly payload: unknown; readonly resource?: string };

export type DemoAdapters = {
  readonly fenced: AdapterDefinition<DestinationPayload & { readonly resource: string }>;
  readonly idempotent: AdapterDefinition<DestinationPayload>;
  readonly queryable: AdapterDefinition<DestinationPayload>;
  readonly opaque: AdapterDefinition<DestinationPayload>;
};

/** The four adapters of the synthetic destination service at `baseUrl`. */
export function demoAdapters(baseUrl: string): DemoAdapters {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    fenced: defineAdapter<DestinationPayload & { readonly resource: string }>({
      name: "fenced",
      version: "1",
      contract: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: true, repetition: "idempotency_protected" },
      timeoutMs: TIMEOUT_MS,
      concurrencyLimit: CONCURRENCY_LIMIT,
      epochAdminUrl: `${base}/admin/epoch`,
      invoke: (call) =>
        create("fenced", `${base}/fenced/${encodeURIComponent(call.payload.resource)}`, call, {
          "fenceline-epoch": String(call.epoch),
          "fenceline-term": String(call.fencingTerm),
          "fenceline-request-identity": call.requestIdentity,
        }),
    }),
    idempotent: defineAdapter<DestinationPayload>({
      name: "idempotent",
      version: "1",
      contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
      timeoutMs: TIMEOUT_MS,
      concurrencyLimit: CONCURRENCY_LIMIT,
      invoke: (call) => create("idempotent", `${base}/idempotent`, call, { "idempotency-key": call.requestIdentity }),
    }),
    queryable: defineAdapter<DestinationPayload>({
      name: "queryable",
      version: "1",
      contract: { idempotencyKeys: false, statusQuery: true, fenceEnforcement: false, repetition: "reconcilable" },
      timeoutMs: TIMEOUT_MS,
      concurrencyLimit: CONCURRENCY_LIMIT,
      invoke: (call) => create("queryable", `${base}/queryable`, call, { "fenceline-client-reference": call.requestIdentity }),
      query: async ({ requestIdentity, signal, timeoutMs }): Promise<AdapterStatusAnswer> => {
        const url = `${base}/queryable/status/${encodeURIComponent(requestIdentity)}`;
        const { body } = await exchange("queryable", url, { method: "GET", signal }, timeoutMs);
        const { status, externalReference, applications } = (body ?? {}) as { status?: unknown; externalReference?: unknown; applications?: unknown };
        if (status === "not_found") return { status, result: body };
        if (status === "applied" && typeof externalReference === "string" && typeof applications === "number") {
          return { status, externalReference, result: body };
        }
        throw new UnknownOutcome("queryable", "unreadable answer");
      },
    }),
    opaque: defineAdapter<DestinationPayload>({
      name: "opaque",
      version: "1",
      contract: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: false, repetition: "prohibited" },
      timeoutMs: TIMEOUT_MS,
      concurrencyLimit: CONCURRENCY_LIMIT,
      // How support checks it by hand: the service's effect audit, which records the identity header.
      review: {
        checkUrl: `${base}/admin/audit?requestIdentity={requestIdentity}`,
        instructions: "The destination cannot be asked about one request. Look for the request identity in its effect audit: an effect there means it was delivered, and its reference is the effect's id.",
      },
      // The identity header is for the service's audit only: the opaque destination ignores it.
      invoke: (call) => create("opaque", `${base}/opaque`, call, { "fenceline-request-identity": call.requestIdentity }),
    }),
  };
}

async function create(destination: string, url: string, call: AdapterCall<DestinationPayload>, headers: Record<string, string>): Promise<AdapterAnswer> {
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(call.payload.payload ?? null),
    signal: call.signal,
  };
  const { body: result, replayed } = await exchange(destination, url, init, call.timeoutMs);
  const externalReference = (result as { externalReference?: unknown } | null)?.externalReference;
  if (typeof externalReference !== "string") throw new UnknownOutcome(destination, "unreadable answer");
  return { externalReference, result, replayed };
}

/**
 * One request and its classification. A signal that has already fired throws its reason before
 * anything is sent; once the request is under way, every failure to get a readable answer is an
 * unknown outcome.
 */
async function exchange(destination: string, url: string, init: RequestInit & { signal: AbortSignal }, timeoutMs: number): Promise<{ body: unknown; replayed: boolean }> {
  init.signal.throwIfAborted();
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.any([init.signal, timeout]) });
    body = await response.json();
  } catch (error) {
    const reason = timeout.aborted ? "timeout" : init.signal.aborted ? "aborted" : error instanceof SyntaxError ? "unreadable answer" : "connection lost";
    throw new UnknownOutcome(destination, reason, { cause: error });
  }
  if (response.ok) return { body, replayed: response.headers.get("fenceline-replayed") === "true" };

  const problem = (body ?? {}) as { detail?: unknown; currentEpoch?: unknown; currentTerm?: unknown; retryAfterMs?: unknown };
  if (response.status === 409) {
    throw new StaleTermRejected(destination, optionalBigint(problem.currentEpoch), optionalBigint(problem.currentTerm));
  }
  if (response.status === 429) {
    throw new RateLimited(destination, typeof problem.retryAfterMs === "number" ? problem.retryAfterMs : retryAfterHeader(response.headers.get("retry-after")));
  }
  throw new DefiniteFailure(destination, response.status, typeof problem.detail === "string" ? problem.detail : response.statusText);
}

function optionalBigint(value: unknown): bigint | null {
  return typeof value === "string" && /^\d+$/.test(value) ? BigInt(value) : null;
}

/** Retry-After is delta-seconds or an HTTP date; without a usable one, a second. */
function retryAfterHeader(value: string | null): number {
  if (value === null) return 1_000;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1_000 : Math.max(0, at - Date.now());
}
