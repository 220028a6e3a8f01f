/**
 * What `fenceline/client` throws: every refusal the API can give, as its own class, so callers
 * branch on the class (or on `code`) instead of parsing messages. Anything that is not an API
 * refusal (the network, a timeout) is a {@link FencelineConnectionError}: the outcome of that
 * call is unknown, and a create repeated with the same idempotency key is safe.
 */

/** One field the API refused, by its path in the input (`address.postcode`). */
export type FieldIssue = { readonly path: string; readonly message: string };

/** An answer of the API that refused the call (problem+json). */
export class FencelineApiError extends Error {
  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The problem's stable code, e.g. `invalid-input`, `unknown-kind`, `request-ended`. */
    readonly code: string,
    message: string,
    /** The whole problem body, for what a subclass does not name. */
    readonly problem: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input (or the Idempotency-Key) was refused: `issues` names each offending field. */
export class InvalidInputError extends FencelineApiError {
  readonly issues: readonly FieldIssue[];
  constructor(status: number, code: string, message: string, problem: Readonly<Record<string, unknown>>) {
    super(status, code, message, problem);
    this.issues = Array.isArray(problem.issues) ? (problem.issues as FieldIssue[]) : [];
  }
}

/** No worker has registered this workflow kind (or version); `kinds` lists those that exist. */
export class UnknownKindError extends FencelineApiError {
  readonly kinds: readonly { readonly kind: string; readonly versions: readonly number[] }[];
  constructor(status: number, code: string, message: string, problem: Readonly<Record<string, unknown>>) {
    super(status, code, message, problem);
    this.kinds = Array.isArray(problem.kinds) ? (problem.kinds as UnknownKindError["kinds"][number][]) : [];
  }
}

/** The call conflicts with the request's state: an idempotency key reused with another input, or cancelling a request that ended. */
export class ConflictError extends FencelineApiError {}

/** Too many calls: try again after `retryAfterMs`. */
export class RateLimitedError extends FencelineApiError {
  constructor(
    status: number,
    code: string,
    message: string,
    problem: Readonly<Record<string, unknown>>,
    readonly retryAfterMs: number,
  ) {
    super(status, code, message, problem);
  }
}

/** The app key is missing, unknown or revoked (401), or lacks the scope this call needs (403). */
export class UnauthorizedError extends FencelineApiError {}

/** No request of this app has that id. */
export class NotFoundError extends FencelineApiError {}

/** The call got no usable answer (network down, timeout, an answer that is not the API's): its outcome is unknown. */
export class FencelineConnectionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FencelineConnectionError";
  }
}

/** `waitForEnd` ran out of time while the request was still active; the request goes on. */
export class WaitTimedOutError extends Error {
  constructor(
    /** The request that was still active. */
    readonly requestId: string,
    /** How long the wait lasted. */
    readonly waitedMs: number,
  ) {
    super(`request ${requestId} was still active after ${waitedMs} ms`);
    this.name = "WaitTimedOutError";
  }
}

/** Retry-After is delta-seconds or an HTTP date; without a usable one, a second. */
function retryAfterMs(value: string | null): number {
  if (value === null) return 1_000;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1_000 : Math.max(0, at - Date.now());
}

/** The typed error for a refused answer. */
export function errorOf(status: number, body: unknown, headers: Headers): FencelineApiError {
  const problem = (body !== null && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const code = typeof problem.code === "string" ? problem.code : typeof problem.type === "string" ? problem.type.replace(/^urn:fenceline:problem:/, "") : `http_${status}`;
  const message = typeof problem.detail === "string" ? problem.detail : `HTTP ${status}`;
  if (status === 401 || status === 403) return new UnauthorizedError(status, code, message, problem);
  if (status === 404) return new NotFoundError(status, code, message, problem);
  if (status === 429) return new RateLimitedError(status, code, message, problem, retryAfterMs(headers.get("retry-after")));
  if (code === "unknown-kind") return new UnknownKindError(status, code, message, problem);
  if (code === "idempotency-key-reused" || code === "event-key-reused" || status === 409) return new ConflictError(status, code, message, problem);
  if (status === 400 || status === 422) return new InvalidInputError(status, code, message, problem);
  return new FencelineApiError(status, code, message, problem);
}
