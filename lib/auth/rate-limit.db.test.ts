/**
 * The token bucket in PostgreSQL allows its burst, then refuses with a RateLimitedError (a 429
 * whose Retry-After says when a token will be back); keys and limiters are independent, `check`
 * never spends a token, and the refill follows the database clock. Takes from two pools at once
 * (two web replicas) spend exactly the capacity between them, and refilled buckets are swept.
 */
import { expect } from "vitest";
import { createPool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { RateLimiter } from "./rate-limit";

const refusal = { code: "rate_limited" };

test("a burst, then refusals saying when to retry until the bucket refills; keys and limiters apart; check spends nothing", async ({ db }) => {
  const limiter = new RateLimiter("test-burst", "sign-in", { capacity: 3, refillPerSecond: 0.5 });
  for (let i = 0; i < 3; i += 1) await limiter.take(db.pool, "1.2.3.4");
  await expect(limiter.take(db.pool, "1.2.3.4")).rejects.toMatchObject({ ...refusal, retryAfterSeconds: 2 });
  await expect(limiter.check(db.pool, "1.2.3.4")).rejects.toMatchObject(refusal);
  await limiter.take(db.pool, "5.6.7.8");
  await new RateLimiter("test-other", "sign-in", { capacity: 1, refillPerSecond: 0.5 }).take(db.pool, "1.2.3.4");

  // 1.5 s of database time later: half a token short, so one second to wait, and still refused.
  await db.pool.query(`UPDATE rate_limit_bucket SET updated_at = updated_at - interval '1.5 s' WHERE limiter = 'test-burst' AND bucket_key = '1.2.3.4'`);
  await expect(limiter.check(db.pool, "1.2.3.4")).rejects.toMatchObject({ ...refusal, retryAfterSeconds: 1 });
  await db.pool.query(`UPDATE rate_limit_bucket SET updated_at = updated_at - interval '0.5 s' WHERE limiter = 'test-burst' AND bucket_key = '1.2.3.4'`);
  await limiter.check(db.pool, "1.2.3.4");
  await limiter.check(db.pool, "1.2.3.4");
  await limiter.take(db.pool, "1.2.3.4");
  await expect(limiter.take(db.pool, "1.2.3.4")).rejects.toMatchObject(refusal);
  // A key never taken from has its whole burst.
  await limiter.check(db.pool, "9.9.9.9");
});

test("takes from two replicas at once spend exactly the capacity between them", async ({ db }) => {
  const other = createPool(db.url, { applicationName: "fenceline-test-replica-2", max: 5 });
  try {
    const limiter = new RateLimiter("test-shared", "request creation", { capacity: 10, refillPerSecond: 0.001 });
    const takes = Array.from({ length: 30 }, (_, i) => limiter.take(i % 2 === 0 ? db.pool : other, "10.0.0.1"));
    const outcomes = await Promise.allSettled(takes);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(10);
    for (const outcome of outcomes) if (outcome.status === "rejected") expect(outcome.reason).toMatchObject(refusal);
  } finally {
    await other.end();
  }
});

test("buckets that have refilled are swept; the others stay", async ({ db }) => {
  const limiter = new RateLimiter("test-sweep", "sign-in", { capacity: 2, refillPerSecond: 1 });
  await limiter.take(db.pool, "old");
  await limiter.take(db.pool, "recent");
  await db.pool.query(`UPDATE rate_limit_bucket SET updated_at = updated_at - interval '3 s' WHERE limiter = 'test-sweep' AND bucket_key = 'old'`);
  // The sweep runs with one take in 200.
  for (let i = 0; i < 198; i += 1) await limiter.take(db.pool, `key-${i}`).catch(() => undefined);
  const { rows } = await db.pool.query<{ bucket_key: string }>(`SELECT bucket_key FROM rate_limit_bucket WHERE limiter = 'test-sweep' AND bucket_key IN ('old', 'recent')`);
  expect(rows.map((row) => row.bucket_key)).toEqual(["recent"]);
});
