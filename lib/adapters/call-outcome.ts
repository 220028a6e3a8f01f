/**
 * How an adapter call ended, as far as the caller can tell. Every adapter's client throws one of
 * these instead of a raw transport error, and the worker acts on the class alone:
 * StaleTermRejected, RateLimited and DefiniteFailure mean nothing was applied; UnknownOutcome
 * means it may or may not have been, and only the adapter's contract says what to do next.
 */

export abstract class DestinationCallError extends Error {
  abstract readonly code: "stale_term" | "rate_limited" | "definite_failure" | "unknown_outcome";
  constructor(
    readonly destination: string,
    message: string,
  ) {
    super(`${destination}: ${message}`);
    this.name = new.target.name;
  }
}

/** The fenced destination holds a newer (epoch, term) for the resource; nothing was applied. */
export class StaleTermRejected extends DestinationCallError {
  readonly code = "stale_term";
  constructor(
    destination: string,
    readonly currentEpoch: bigint | null,
    readonly currentTerm: bigint | null,
  ) {
    super(destination, `stale term rejected (destination holds epoch ${currentEpoch}, term ${currentTerm})`);
  }
}

/** Refused before any effect; try again no sooner than `retryAfterMs`. */
export class RateLimited extends DestinationCallError {
  readonly code = "rate_limited";
  constructor(
    destination: string,
    readonly retryAfterMs: number,
  ) {
    super(destination, `rate limited, retry after ${retryAfterMs} ms`);
  }
}

/** The destination answered that it applied nothing (any other 4xx or 5xx). */
export class DefiniteFailure extends DestinationCallError {
  readonly code = "definite_failure";
  constructor(
    destination: string,
    readonly status: number,
    readonly detail: string,
  ) {
    super(destination, `failed with ${status} without effect: ${detail}`);
  }
}

/** The request may have been applied: no answer arrived, or it could not be read. */
export class UnknownOutcome extends DestinationCallError {
  readonly code = "unknown_outcome";
  constructor(
    destination: string,
    readonly reason: "timeout" | "aborted" | "connection lost" | "unreadable answer" | "server error",
    options?: { cause?: unknown },
  ) {
    super(destination, `outcome unknown: ${reason}`);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}
