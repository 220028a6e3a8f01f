/**
 * Adapters: the adopter's way out to one destination. An adapter says what its destination can
 * promise (its contract), how long one call may take and how many may run at once, and how to
 * call it (`invoke`) and, when the destination answers status queries, how to ask it (`query`).
 * The engine chooses recovery from the contract alone, so the same evidence is decided the same
 * way for every adapter with the same promises.
 */
import { pureContract, type AdapterContract, type AdapterRate, type RepetitionPolicy } from "@/lib/adapters/contract";
import { REPETITION_POLICIES } from "@/lib/engine/vocabulary";
import { DefinitionError } from "./errors";

/** One call to the destination, as the engine hands it to `invoke`. */
export type AdapterCall<Payload> = {
  /** What the step sends: built by the step from its input. */
  readonly payload: Payload;
  /**
   * Stable per step: every retry of the step presents the same identity. Send it as the
   * destination's idempotency key or client reference.
   */
  readonly requestIdentity: string;
  /** The fencing term's epoch: a fenced destination rejects a write from an older one. */
  readonly epoch: bigint;
  /** The fencing term's version within its epoch; strictly increasing per step. */
  readonly fencingTerm: bigint;
  /** Fires when the worker's authority is lost or the workflow is cancelled: stop and give up. */
  readonly signal: AbortSignal;
  /** This call's timeout: the adapter's own `timeoutMs`. */
  readonly timeoutMs: number;
  /**
   * Headers that carry the attempt's trace to the destination: `{ traceparent }` (W3C trace
   * context) when the request is traced, `{}` otherwise (absent where a caller other than the worker invokes the adapter). Send them with the call so the
   * destination's spans join the request's trace; `httpAdapter` does. The call also runs inside
   * the attempt's span, so an instrumented HTTP client propagates it by itself.
   */
  readonly traceHeaders?: Readonly<Record<string, string>>;
};

/** What the destination answered: the effect exists, and this is how to find it there. */
export type AdapterAnswer<Result = unknown> = {
  /** The destination's own id for the effect (a charge id, a parcel number), or null when it has none. */
  readonly externalReference: string | null;
  /** Anything worth keeping with the receipt; the steps that depend on this one read it as its result. */
  readonly result?: Result;
  /** True when the destination answered with an earlier identical request's result (an idempotent replay). */
  readonly replayed?: boolean;
};

/** A status query for the step's request identity. */
export type AdapterStatusQuery = {
  readonly requestIdentity: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Headers that carry the attempt's trace to the destination: see {@link AdapterCall.traceHeaders}. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
};

/** What a status query learned: the request was applied (with its reference), or there is no trace of it. */
export type AdapterStatusAnswer =
  | { readonly status: "applied"; readonly externalReference: string; readonly result?: unknown }
  | { readonly status: "not_found"; readonly result?: unknown };

/** What the destination promises. Recovery reads these flags, never the adapter's name. */
export type AdapterPromises = {
  /** The destination deduplicates by the request identity sent as its idempotency key. */
  readonly idempotencyKeys: boolean;
  /** The destination can be asked what happened to a request identity (`query` is then required). */
  readonly statusQuery: boolean;
  /**
   * The destination itself atomically rejects an older (epoch, version) for the same resource.
   * Only then is the fencing term protection rather than ceremony.
   */
  readonly fenceEnforcement: boolean;
  /** What repeating a call may do: see {@link RepetitionPolicy}. */
  readonly repetition: RepetitionPolicy;
};

/**
 * What {@link defineAdapter} takes: the destination's promises, limits and calls. `Payload` is
 * what a step sends it, `Result` what its answer carries (a step's result, typed for the steps
 * that depend on it).
 */
export type AdapterOptions<Payload, Result = unknown> = {
  /** Lower-case letters, digits, `.`, `_` and `-`; unique per destination. */
  readonly name: string;
  /** Changes whenever the contract, the call or its meaning changes; recorded on every attempt. */
  readonly version: string;
  readonly contract: AdapterPromises;
  /** One call's longest wait, in milliseconds. Must fit inside the attempt deadline of the step's class. */
  readonly timeoutMs: number;
  /** Calls to this destination in flight at once, across every worker. */
  readonly concurrencyLimit: number;
  /**
   * Calls the destination allows per second, across every worker: at most `perSecond` start in
   * any one second, and at most `burst` (default `perSecond`) at once. A step that finds no call
   * slot free waits without a lease, as after a 429, and says so on its page. None by default.
   *
   * @example `rate: { perSecond: 10, burst: 2 }`: ten calls a second, never more than two at once.
   */
  readonly rate?: { readonly perSecond: number; readonly burst?: number };
  /**
   * Calls the destination once. Return its answer when it applied the effect. Throw
   * `RateLimited`, `DefiniteFailure` or `StaleTermRejected` when it answered that nothing was
   * applied, and `UnknownOutcome` (or anything else) when you cannot tell: recovery then decides
   * from the contract.
   */
  invoke(call: AdapterCall<Payload>): Promise<AdapterAnswer<Result>>;
  /** Asks the destination about a request identity; required exactly when `contract.statusQuery` is true. */
  query?(query: AdapterStatusQuery): Promise<AdapterStatusAnswer>;
  /**
   * For a fenced destination: the base URL of its epoch administration (GET/PUT `<url>/admin/epoch`),
   * where an epoch transition installs a new epoch and proves the old one is refused.
   */
  readonly epochAdminUrl?: string;
  /**
   * How support can check this destination by hand when a step's outcome is unknown, shown on the
   * review case: `checkUrl`, a page of the destination's with `{requestIdentity}` filled from the
   * request (`"https://print.example/jobs?key={requestIdentity}"`), and/or `instructions`, a
   * sentence ("Call the print shop and quote the request identity"). Most useful for an opaque
   * destination, whose unknown outcomes all come to a person.
   */
  readonly review?: ReviewHint;
};

/** How support can check a destination by hand: a page (a URL template) and/or a sentence. */
export type ReviewHint = {
  /** A URL with `{requestIdentity}` where the request's identity goes (URL-encoded). */
  readonly checkUrl?: string;
  /** What to do, in one or two sentences (at most 500 characters). */
  readonly instructions?: string;
};

/** The placeholder a review hint's `checkUrl` may use. */
export const REVIEW_URL_PLACEHOLDER = "{requestIdentity}";

/** The problems of a review hint, or none. */
export function reviewHintProblems(review: unknown): string[] {
  if (review === null || typeof review !== "object") return ["review must be an object: { checkUrl?, instructions? }"];
  const { checkUrl, instructions } = review as Record<string, unknown>;
  const problems: string[] = [];
  if (checkUrl === undefined && instructions === undefined) problems.push("review needs checkUrl, instructions, or both");
  if (checkUrl !== undefined) {
    const filled = typeof checkUrl === "string" ? checkUrl.replaceAll(REVIEW_URL_PLACEHOLDER, "identity") : null;
    const otherPlaceholder = typeof checkUrl === "string" ? /\{(?!requestIdentity\})[^}]*\}/.exec(checkUrl) : null;
    if (filled === null || !URL.canParse(filled) || !/^https?:$/.test(new URL(filled).protocol)) {
      problems.push(`review.checkUrl must be an http(s) URL, with ${REVIEW_URL_PLACEHOLDER} where the request identity goes, got ${JSON.stringify(checkUrl)}`);
    } else if (otherPlaceholder) {
      problems.push(`review.checkUrl may use only ${REVIEW_URL_PLACEHOLDER}, not ${otherPlaceholder[0]}`);
    } else if ((checkUrl as string).length > 2_000) problems.push("review.checkUrl must be at most 2000 characters");
  }
  if (instructions !== undefined && (typeof instructions !== "string" || instructions.trim() === "" || instructions.length > 500)) {
    problems.push("review.instructions must be a non-empty sentence of at most 500 characters");
  }
  return problems;
}

/** An adapter as the worker runs it and as it is registered. Made by {@link defineAdapter}. */
export type AdapterDefinition<Payload = unknown, Result = unknown> = {
  readonly name: string;
  readonly version: string;
  readonly contract: AdapterContract;
  readonly epochAdminUrl: string | null;
  /** How support can check the destination by hand; null when the adapter says nothing. */
  readonly review: ReviewHint | null;
  /** Makes one call to the destination (the options' `invoke`, bound to them). */
  readonly invoke: (call: AdapterCall<Payload>) => Promise<AdapterAnswer<Result>>;
  /** Asks the destination what happened to a request identity; null when it answers no status queries. */
  readonly query: ((query: AdapterStatusQuery) => Promise<AdapterStatusAnswer>) | null;
};

const NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
/** The built-in adapters of wait steps (`fenceline.timer`, `fenceline.event`) are named under it. */
export const BUILT_IN_PREFIX = "fenceline.";
/** The highest rate an adapter may declare. */
export const MAX_RATE_PER_SECOND = 10_000;

/** The problems of a declared rate, or none. */
export function rateProblems(rate: { perSecond?: unknown; burst?: unknown }): string[] {
  const problems: string[] = [];
  const { perSecond, burst } = rate;
  const perSecondValid = Number.isInteger(perSecond) && (perSecond as number) >= 1 && (perSecond as number) <= MAX_RATE_PER_SECOND;
  if (!perSecondValid) problems.push(`rate.perSecond must be an integer from 1 to ${MAX_RATE_PER_SECOND}, got ${JSON.stringify(perSecond)}`);
  if (burst !== undefined && (!Number.isInteger(burst) || (burst as number) < 1 || (perSecondValid && (burst as number) > (perSecond as number)))) {
    problems.push(`rate.burst must be an integer from 1 to rate.perSecond, got ${JSON.stringify(burst)}`);
  }
  return problems;
}
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/** The problems of an adapter's options, or none. */
function problemsOf<Payload, Result>(options: AdapterOptions<Payload, Result>): string[] {
  const problems: string[] = [];
  const { contract } = options;
  if (!NAME.test(options.name)) problems.push(`name must be 1–100 lower-case letters, digits, ".", "_" or "-", got ${JSON.stringify(options.name)}`);
  if (options.name === pureContract.name) problems.push(`"${pureContract.name}" is the built-in adapter of pure steps`);
  if (options.name.startsWith(BUILT_IN_PREFIX)) problems.push(`names starting with "${BUILT_IN_PREFIX}" are the built-in adapters of wait steps`);
  if (!VERSION.test(options.version)) problems.push(`version must be 1–64 letters, digits, ".", "_", "+" or "-", got ${JSON.stringify(options.version)}`);
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1) problems.push(`timeoutMs must be a positive integer, got ${options.timeoutMs}`);
  if (!Number.isInteger(options.concurrencyLimit) || options.concurrencyLimit < 1) {
    problems.push(`concurrencyLimit must be a positive integer, got ${options.concurrencyLimit}`);
  }
  if (!REPETITION_POLICIES.includes(contract.repetition)) {
    problems.push(`contract.repetition must be one of ${REPETITION_POLICIES.join(", ")}, got ${JSON.stringify(contract.repetition)}`);
  }
  if (typeof options.invoke !== "function") problems.push("invoke must be a function");
  if (contract.statusQuery && typeof options.query !== "function") problems.push("contract.statusQuery is true, so query must be a function");
  if (!contract.statusQuery && options.query !== undefined) problems.push("query is given but contract.statusQuery is false: say which is true");
  if (contract.repetition === "idempotency_protected" && !contract.idempotencyKeys && !contract.fenceEnforcement) {
    problems.push("repetition idempotency_protected needs idempotencyKeys or fenceEnforcement: something must stop a repeat");
  }
  if (contract.repetition === "reconcilable" && !contract.statusQuery) problems.push("repetition reconcilable needs statusQuery: a repeat is settled by asking");
  if (options.rate !== undefined) {
    if (options.rate === null || typeof options.rate !== "object") problems.push("rate must be an object: { perSecond, burst? }");
    else problems.push(...rateProblems(options.rate));
  }
  if (options.epochAdminUrl !== undefined) {
    if (!contract.fenceEnforcement) problems.push("epochAdminUrl is only for destinations that enforce fencing terms");
    if (!URL.canParse(options.epochAdminUrl)) problems.push(`epochAdminUrl is not a URL: ${JSON.stringify(options.epochAdminUrl)}`);
  }
  if (options.review !== undefined) problems.push(...reviewHintProblems(options.review));
  return problems;
}

/**
 * Defines an adapter. Throws a {@link DefinitionError} naming every problem: a contract that
 * cannot hold (a `reconcilable` destination without status queries), a missing `query`, a
 * timeout or limit that is not a positive integer.
 *
 * @example
 * ```ts
 * export const payments = defineAdapter<{ amountCents: number }, { status: string }>({
 *   name: "payments", version: "1",
 *   contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
 *   timeoutMs: 5_000, concurrencyLimit: 8,
 *   invoke: async ({ payload, requestIdentity, signal }) => {
 *     const charge = await provider.charge(payload, { idempotencyKey: requestIdentity, signal });
 *     return { externalReference: charge.id, result: { status: charge.status } };
 *   },
 * });
 * ```
 */
export function defineAdapter<Payload = unknown, Result = unknown>(options: AdapterOptions<Payload, Result>): AdapterDefinition<Payload, Result> {
  const problems = problemsOf(options);
  if (problems.length > 0) throw new DefinitionError(`adapter ${options.name}@${options.version}`, problems);
  const { contract } = options;
  return Object.freeze({
    name: options.name,
    version: options.version,
    contract: Object.freeze({
      name: options.name,
      version: options.version,
      externalEffect: true,
      idempotencyKeys: contract.idempotencyKeys,
      statusQuery: contract.statusQuery,
      fenceEnforcement: contract.fenceEnforcement,
      repetition: contract.repetition,
      timeoutMs: options.timeoutMs,
      concurrencyLimit: options.concurrencyLimit,
      rate: rateOf(options.rate),
      operationClasses: contract.statusQuery ? (["create", "query"] as const) : (["create"] as const),
    }),
    epochAdminUrl: options.epochAdminUrl ?? null,
    review: options.review ? Object.freeze({ ...options.review }) : null,
    invoke: options.invoke.bind(options),
    query: options.query ? options.query.bind(options) : null,
  });
}

const rateOf = (rate: AdapterOptions<unknown>["rate"]): AdapterRate | null =>
  rate === undefined ? null : Object.freeze({ perSecond: rate.perSecond, burst: rate.burst ?? rate.perSecond });
