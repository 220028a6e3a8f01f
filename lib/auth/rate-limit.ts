/**
 * A token bucket per key (client address, account), in process memory: enough for one web
 * process, and it forgets on restart, which only ever lets a little more through. A refusal is
 * a 429 problem with Retry-After in whole seconds.
 */
import { RateLimitedError } from "./errors";

export type BucketPolicy = { readonly capacity: number; readonly refillPerSecond: number };

/** Keys beyond this are evicted oldest first, so spoofed keys cannot grow memory without bound. */
const MAX_KEYS = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedMs: number }>();

  constructor(
    readonly name: string,
    private readonly policy: BucketPolicy,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Takes one token for `key`, or throws RateLimitedError. */
  take(key: string): void {
    this.check(key);
    this.bucket(key).tokens -= 1;
  }

  /** Throws RateLimitedError when `key` has no token left, without taking one (see `take`). */
  check(key: string): void {
    const bucket = this.bucket(key);
    if (bucket.tokens < 1) {
      const retryAfter = Math.ceil((1 - bucket.tokens) / this.policy.refillPerSecond);
      throw new RateLimitedError(this.name, retryAfter);
    }
  }

  /** The key's bucket, refilled for the time since it was last touched. */
  private bucket(key: string): { tokens: number; updatedMs: number } {
    const now = this.nowMs();
    const bucket = this.buckets.get(key) ?? { tokens: this.policy.capacity, updatedMs: now };
    bucket.tokens = Math.min(this.policy.capacity, bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.policy.refillPerSecond);
    bucket.updatedMs = now;
    // Re-inserted so the map's order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > MAX_KEYS) this.buckets.delete(this.buckets.keys().next().value!);
    return bucket;
  }
}

/** The client's address as the web server saw it; behind a proxy, its first X-Forwarded-For hop. */
export function clientKey(request: Request): string {
  return request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || request.headers.get("x-real-ip") || "local";
}
