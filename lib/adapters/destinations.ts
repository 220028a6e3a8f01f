/**
 * The four adapters of the synthetic destination service (lib/adapters/destination): their
 * contracts, registered at import, and a typed HTTP client for each.
 *
 * A client call ends in one of: an answer `{ externalReference, result }`, or a typed error that
 * says what the caller may conclude. StaleTermRejected, RateLimited and DefiniteFailure mean no
 * effect was applied. UnknownOutcome means the request may or may not have been applied (timeout,
 * dropped connection, unreadable answer): only the contract's repetition policy says what to do.
 */
import { DefiniteFailure, RateLimited, StaleTermRejected, UnknownOutcome } from "./call-outcome";
import { registerContract, type AdapterContract } from "./contract";

export { DefiniteFailure, DestinationCallError, RateLimited, StaleTermRejected, UnknownOutcome } from "./call-outcome";

const TIMEOUT_MS = 5_000;
const CONCURRENCY_LIMIT = 8;

/**
 * Rejects an older (epoch, term) per resource itself, and binds a request identity to its first
 * effect at a resource, so a retry under a newer term replays instead of applying again.
 */
export const fencedContract: AdapterContract = {
  name: "fenced",
  version: "1",
  externalEffect: true,
  idempotencyKeys: false,
  statusQuery: false,
  fenceEnforcement: true,
  repetition: "idempotency_protected",
  timeoutMs: TIMEOUT_MS,
  concurrencyLimit: CONCURRENCY_LIMIT,
  operationClasses: ["create"],
};

/** Deduplicates by Idempotency-Key; ignores terms. */
export const idempotentContract: AdapterContract = {
  name: "idempotent",
  version: "1",
  externalEffect: true,
  idempotencyKeys: true,
  statusQuery: false,
  fenceEnforcement: false,
  repetition: "idempotency_protected",
  timeoutMs: TIMEOUT_MS,
  concurrencyLimit: CONCURRENCY_LIMIT,
  operationClasses: ["create"],
};

/** Applies every create, even a repeated client reference, but answers status by client reference. */
export const queryableContract: AdapterContract = {
  name: "queryable",
  version: "1",
  externalEffect: true,
  idempotencyKeys: false,
  statusQuery: true,
  fenceEnforcement: false,
  repetition: "reconcilable",
  timeoutMs: TIMEOUT_MS,
  concurrencyLimit: CONCURRENCY_LIMIT,
  operationClasses: ["create", "query"],
};

/** Applies every create and can tell nothing afterwards. */
export const opaqueContract: AdapterContract = {
  name: "opaque",
  version: "1",
  externalEffect: true,
  idempotencyKeys: false,
  statusQuery: false,
  fenceEnforcement: false,
  repetition: "prohibited",
  timeoutMs: TIMEOUT_MS,
  concurrencyLimit: CONCURRENCY_LIMIT,
  operationClasses: ["create"],
};

for (const contract of [fencedContract, idempotentContract, queryableContract, opaqueContract]) registerContract(contract);

export type DestinationCall = {
  /** Stable per step: every retry presents the same identity. */
  readonly requestIdentity: string;
  readonly epoch: bigint;
  readonly fencingTerm: bigint;
  /** Fires when the caller's authority is lost; the call then ends as an unknown outcome. */
  readonly signal: AbortSignal;
  /** The effect's content, sent as the JSON body. */
  readonly payload?: unknown;
  /** This call's timeout; the client's own when absent. */
  readonly timeoutMs?: number;
};

/** `replayed`: the destination answered with the result of an earlier, identical request. */
export type DestinationResult = { externalReference: string; result: unknown; replayed: boolean };

export type QueryableStatus = { status: "applied"; externalReference: string; applications: number } | { status: "not_found" };

/** `timeoutMs` bounds one call; it defaults to the contract's and must stay below the attempt deadline. */
export function fencedClient(baseUrl: string, timeoutMs = fencedContract.timeoutMs) {
  return {
    create: (call: DestinationCall & { resource: string }): Promise<DestinationResult> =>
      create(fencedContract.name, `${baseUrl}/fenced/${encodeURIComponent(call.resource)}`, timeoutMs, call, {
        "fenceline-epoch": String(call.epoch),
        "fenceline-term": String(call.fencingTerm),
        "fenceline-request-identity": call.requestIdentity,
      }),
  };
}

export function idempotentClient(baseUrl: string, timeoutMs = idempotentContract.timeoutMs) {
  return {
    create: (call: DestinationCall): Promise<DestinationResult> =>
      create(idempotentContract.name, `${baseUrl}/idempotent`, timeoutMs, call, { "idempotency-key": call.requestIdentity }),
  };
}

export function queryableClient(baseUrl: string, timeoutMs = queryableContract.timeoutMs) {
  return {
    create: (call: DestinationCall): Promise<DestinationResult> =>
      create(queryableContract.name, `${baseUrl}/queryable`, timeoutMs, call, { "fenceline-client-reference": call.requestIdentity }),
    query: async (clientReference: string, signal: AbortSignal, callTimeoutMs = timeoutMs): Promise<QueryableStatus> => {
      const url = `${baseUrl}/queryable/status/${encodeURIComponent(clientReference)}`;
      const { body } = await exchange(queryableContract.name, url, { method: "GET", signal }, callTimeoutMs);
      const { status, externalReference, applications } = body as { status?: unknown; externalReference?: unknown; applications?: unknown };
      if (status === "not_found") return { status };
      if (status === "applied" && typeof externalReference === "string" && typeof applications === "number") {
        return { status, externalReference, applications };
      }
      throw new UnknownOutcome(queryableContract.name, "unreadable answer");
    },
  };
}

export function opaqueClient(baseUrl: string, timeoutMs = opaqueContract.timeoutMs) {
  return {
    create: (call: DestinationCall): Promise<DestinationResult> =>
      // The identity header is for the service's audit only: the opaque destination ignores it.
      create(opaqueContract.name, `${baseUrl}/opaque`, timeoutMs, call, { "fenceline-request-identity": call.requestIdentity }),
  };
}

async function create(
  destination: string,
  url: string,
  timeoutMs: number,
  call: DestinationCall,
  headers: Record<string, string>,
): Promise<DestinationResult> {
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(call.payload ?? null),
    signal: call.signal,
  };
  const { body: result, replayed } = await exchange(destination, url, init, call.timeoutMs ?? timeoutMs);
  const externalReference = (result as { externalReference?: unknown } | null)?.externalReference;
  if (typeof externalReference !== "string") throw new UnknownOutcome(destination, "unreadable answer");
  return { externalReference, result, replayed };
}

/**
 * One request and its classification. A signal that has already fired throws its reason before
 * anything is sent; once the request is under way, every failure to get a readable answer is an
 * unknown outcome.
 */
async function exchange(
  destination: string,
  url: string,
  init: RequestInit & { signal: AbortSignal },
  timeoutMs: number,
): Promise<{ body: unknown; replayed: boolean }> {
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

/** The resource a fenced destination's epoch probe writes to; no step uses it. */
export const EPOCH_PROBE_RESOURCE = "fenceline-epoch-probe";

/**
 * The fenced destination's epoch administration: what an epoch transition installs there, and
 * the stale-command probe that proves a prior epoch is refused.
 */
export function fencedEpochAdmin(baseUrl: string, timeoutMs = fencedContract.timeoutMs) {
  const admin = async (init: RequestInit): Promise<{ installed: bigint; highestSeen: bigint }> => {
    const response = await fetch(`${baseUrl}/admin/epoch`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { installed?: unknown; highestSeen?: unknown; detail?: unknown };
    if (!response.ok || typeof body.installed !== "string" || typeof body.highestSeen !== "string") {
      throw new Error(`fenced destination epoch admin answered ${response.status}: ${String(body.detail ?? "unreadable answer")}`);
    }
    return { installed: BigInt(body.installed), highestSeen: BigInt(body.highestSeen) };
  };
  return {
    adapter: fencedContract.name,
    state: () => admin({ method: "GET" }),
    install: (epoch: bigint) =>
      admin({ method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ epoch: epoch.toString() }) }),
    /** Sends a write from the epoch before `epoch` with the largest term: true when it is refused. */
    probeRejectsOlderThan: async (epoch: bigint): Promise<boolean> => {
      try {
        await fencedClient(baseUrl, timeoutMs).create({
          resource: EPOCH_PROBE_RESOURCE,
          requestIdentity: `epoch-probe-${epoch}`,
          epoch: epoch - 1n,
          fencingTerm: 9_223_372_036_854_775_807n,
          signal: AbortSignal.timeout(timeoutMs),
          payload: { probe: true },
        });
        return false;
      } catch (error) {
        if (error instanceof StaleTermRejected) return true;
        throw error;
      }
    },
  };
}

export type EpochAdmin = ReturnType<typeof fencedEpochAdmin>;
