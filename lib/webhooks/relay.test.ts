/**
 * How the relay reads an answer and spaces its retries: 2xx is the receipt, a 4xx other than 408
 * and 429 is final, the rest retry; Retry-After in seconds or as a date; backoff doubles per retry
 * up to its cap, and jitter only ever shortens it, by at most half.
 */
import { describe, expect, test } from "vitest";
import { backoffMs, classifyAnswer, retryAfterMs } from "./relay";

describe("classifyAnswer", () => {
  test.each([
    [200, "delivered"], [204, "delivered"], [299, "delivered"],
    [400, "failed"], [401, "failed"], [404, "failed"], [410, "failed"], [422, "failed"], [499, "failed"],
    [408, "pending"], [429, "pending"], [500, "pending"], [503, "pending"], [301, "pending"], [100, "pending"],
  ] as const)("%i → %s", (status, state) => expect(classifyAnswer(status)).toBe(state));
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  expect(retryAfterMs("7")).toBe(7_000);
  expect(retryAfterMs(new Date(1_000_000 + 30_000).toUTCString(), 1_000_000)).toBe(30_000);
  expect(retryAfterMs(null)).toBeNull();
  expect(retryAfterMs("soon")).toBeNull();
});

test("backoff doubles per retry up to its cap; jitter keeps it within [half, whole)", () => {
  const settings = { backoffBaseMs: 1_000, backoffMaxMs: 60_000 };
  expect([1, 2, 3, 4].map((n) => backoffMs(n, settings, () => 0.999999))).toEqual([1_000, 2_000, 4_000, 8_000]);
  expect(backoffMs(20, settings, () => 0.999999)).toBe(60_000);
  expect(backoffMs(3, settings, () => 0)).toBe(2_000);
});
