/**
 * The token bucket allows its burst, then refuses with a RateLimitedError (a 429 whose Retry-After
 * says when a token will be back); keys are independent, and `check` never spends a token.
 */
import { expect, test } from "vitest";
import { RateLimiter } from "./rate-limit";

test("a burst, then refusals saying when to retry until the bucket refills; keys apart; check spends nothing", () => {
  let nowMs = 0;
  const limiter = new RateLimiter("sign-in", { capacity: 3, refillPerSecond: 0.5 }, () => nowMs);
  for (let i = 0; i < 3; i += 1) limiter.take("1.2.3.4");
  expect(() => limiter.take("1.2.3.4")).toThrow(expect.objectContaining({ code: "rate_limited", retryAfterSeconds: 2 }));
  expect(() => limiter.take("5.6.7.8")).not.toThrow();
  nowMs = 1_999;
  expect(() => limiter.check("1.2.3.4")).toThrow(expect.objectContaining({ code: "rate_limited", retryAfterSeconds: 1 }));
  nowMs = 2_000;
  expect(() => limiter.check("1.2.3.4")).not.toThrow();
  expect(() => limiter.check("1.2.3.4")).not.toThrow();
  limiter.take("1.2.3.4");
  expect(() => limiter.take("1.2.3.4")).toThrow(expect.objectContaining({ code: "rate_limited" }));
});
