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

// Refills are slow (a token per 1000 s) and time passes by moving updated_at back, so a loaded
// machine's own delays change no answer.
const age = (db: { pool: { query: (text: string, values: unknown[]) => Promise<unknown> } }, limiter: string, key: string, seconds: number) =>
  db.pool.query(`UPDATE rate_limit_bucket SET updated_at = updated_at - make_interval(secs => $3) WHERE limiter = $1 AND bucket_key = $2`, [limiter, key, seconds]);

test("a burst, then refusals saying when to retry until the bucket refills; keys and limiters apart; check spends nothing", async ({ db }) => {
  const limiter = new RateLimiter("test-burst", "sign-in", { capacity: 3, refillPerSecond: 0.001 });
  for (let i = 0; i < 3; i += 1) await limiter.take(db.pool, "1.2.3.4");
  const retryAfter = (error: unknown) => (error as { retryAfterSeconds: number }).retryAfterSeconds;
  const first = await limiter.take(db.pool, "1.2.3.4").catch((error: unknown) => error);
  expect(first).toMatchObject(refusal);
  expect(retryAfter(first)).toBeGreaterThan(990);
  expect(retryAfter(first)).toBeLessThanOrEqual(1000);
  await expect(limiter.check(db.pool, "1.2.3.4")).rejects.toMatchObject(refusal);
  await limiter.take(db.pool, "5.6.7.8");
  await new RateLimiter("test-other", "sign-in", { capacity: 1, refillPerSecond: 0.001 }).take(db.pool, "1.2.3.4");

  // 600 s of database time later: 0.6 of a token, so about 400 s to wait, and still refused.
  await age(db, "test-burst", "1.2.3.4", 600);
  const later = await limiter.check(db.pool, "1.2.3.4").catch((error: unknown) => error);
  expect(later).toMatchObject(refusal);
  expect(retryAfter(later)).toBeGreaterThan(390);
  expect(retryAfter(later)).toBeLessThanOrEqual(400);
  await age(db, "test-burst", "1.2.3.4", 400);
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
  const limiter = new RateLimiter("test-sweep", "sign-in", { capacity: 2, refillPerSecond: 0.001 });
  await limiter.take(db.pool, "old");
  await limiter.take(db.pool, "recent");
  // Full again after 2000 s.
  await age(db, "test-sweep", "old", 2_001);
  // The sweep runs with one take in 200.
  for (let i = 0; i < 198; i += 1) await limiter.take(db.pool, `key-${i}`).catch(() => undefined);
  const { rows } = await db.pool.query<{ bucket_key: string }>(`SELECT bucket_key FROM rate_limit_bucket WHERE limiter = 'test-sweep' AND bucket_key IN ('old', 'recent')`);
  expect(rows.map((row) => row.bucket_key)).toEqual(["recent"]);
});
