/**
 * A token bucket per key (client address, account, app key), kept in PostgreSQL so a limit holds
 * whichever web replica answers (docs/decisions/016-several-web-replicas-and-a-pooler.md). Each
 * take is one statement that refills the bucket by the database clock and spends a token only
 * when one is there; concurrent takes on one key queue on its row, so a burst across replicas
 * gets exactly the capacity. A refusal is a 429 problem with Retry-After in whole seconds.
 */
import { run, type Queryable } from "@/lib/engine/db";
import { RateLimitedError } from "./errors";

export type BucketPolicy = { readonly capacity: number; readonly refillPerSecond: number };

/** One in this many takes per process also deletes the limiter's refilled buckets. */
const SWEEP_EVERY = 200;

// The bucket's tokens now: what it held at updated_at plus the refill since, by the database clock.
const REFILLED = `least($3::float8, b.tokens + extract(epoch FROM now() - b.updated_at) * $4::float8)`;

const sql = {
  // The guard is the ON CONFLICT's WHERE: a token is spent only when the refilled bucket holds
  // one. A refused take changes nothing; the second branch then reads the bucket for Retry-After
  // (it sees the row as the statement began, which is the row the guard refused).
  take: {
    name: "rate_limit_take",
    text: `WITH taken AS (
             INSERT INTO rate_limit_bucket AS b (limiter, bucket_key, tokens, updated_at)
             VALUES ($1, $2, $3::float8 - 1, now())
             ON CONFLICT (limiter, bucket_key) DO UPDATE
               SET tokens = ${REFILLED} - 1, updated_at = now()
               WHERE ${REFILLED} >= 1
             RETURNING b.tokens
           )
           SELECT true AS taken, tokens FROM taken
           UNION ALL
           SELECT false, ${REFILLED} FROM rate_limit_bucket b
            WHERE b.limiter = $1 AND b.bucket_key = $2 AND NOT EXISTS (SELECT 1 FROM taken)`,
  },
  check: {
    name: "rate_limit_check",
    text: `SELECT ${REFILLED} AS tokens FROM rate_limit_bucket b WHERE b.limiter = $1 AND b.bucket_key = $2`,
  },
  // A bucket untouched for capacity / refill seconds is full again, the same as no row.
  sweep: {
    name: "rate_limit_sweep",
    text: `DELETE FROM rate_limit_bucket WHERE limiter = $1 AND updated_at < now() - make_interval(secs => $2::float8)`,
  },
} as const;

/**
 * A limit with its policy; its buckets are the `rate_limit_bucket` rows of its `id`. `name` is
 * what a refusal says is limited (two limiters may share one, as sign-in's do).
 */
export class RateLimiter {
  private takes = 0;

  constructor(
    readonly id: string,
    readonly name: string,
    private readonly policy: BucketPolicy,
  ) {}

  /** Takes one token for `key`, or throws RateLimitedError. */
  async take(db: Queryable, key: string): Promise<void> {
    const { capacity, refillPerSecond } = this.policy;
    const [row] = await run<{ taken: boolean; tokens: number }>(db, sql.take, [this.id, key, capacity, refillPerSecond]);
    this.takes += 1;
    if (this.takes % SWEEP_EVERY === 0) await run(db, sql.sweep, [this.id, capacity / refillPerSecond]);
    if (row && !row.taken) this.refuse(row.tokens);
  }

  /** Throws RateLimitedError when `key` has no token left, without taking one (see `take`). */
  async check(db: Queryable, key: string): Promise<void> {
    const [row] = await run<{ tokens: number }>(db, sql.check, [this.id, key, this.policy.capacity, this.policy.refillPerSecond]);
    if (row && row.tokens < 1) this.refuse(row.tokens);
  }

  private refuse(tokens: number): never {
    throw new RateLimitedError(this.name, Math.max(1, Math.ceil((1 - tokens) / this.policy.refillPerSecond)));
  }
}

/** The client's address as the web server saw it; behind a proxy, its first X-Forwarded-For hop. */
export function clientKey(request: Request): string {
  return request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || request.headers.get("x-real-ip") || "local";
}
