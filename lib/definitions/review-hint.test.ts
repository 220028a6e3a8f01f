/**
 * An adapter may say how support checks its destination by hand: a page (a URL template whose
 * only placeholder is {requestIdentity}) and/or a sentence. A hint that could not be shown is
 * refused when the adapter is defined, naming the problem; a sound one reaches the registration
 * and survives the HTTP worker protocol, and is not part of the adapter's shape.
 */
import { expect, test } from "vitest";
import { wireRegisteredAdapter } from "@/lib/api/contract/worker";
import { defineAdapter, type ReviewHint } from "./adapter";
import { registeredAdapter, shapeOfAdapter } from "./registration";

const printer = (review: ReviewHint) =>
  defineAdapter({
    name: "print-shop",
    version: "1",
    contract: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: false, repetition: "prohibited" },
    timeoutMs: 1_000,
    concurrencyLimit: 1,
    review,
    invoke: async () => ({ externalReference: null }),
  });

test("a sound hint is kept, registered, carried over HTTP, and left out of the shape", () => {
  const review = { checkUrl: "https://print.example/jobs?key={requestIdentity}", instructions: "Call the shop and quote the key." };
  const registered = registeredAdapter(printer(review));
  expect(registered.review).toEqual(review);
  expect(wireRegisteredAdapter.parse(JSON.parse(JSON.stringify(registered))).review).toEqual(review);
  expect(shapeOfAdapter(registered)).not.toHaveProperty("review");
  expect(registeredAdapter(printer({ instructions: "Ask the shop." })).review).toEqual({ instructions: "Ask the shop." });
});

test("a hint that could not be shown is refused, naming what is wrong", () => {
  expect(() => printer({})).toThrow(/review needs checkUrl, instructions, or both/);
  expect(() => printer({ checkUrl: "print.example/jobs/{requestIdentity}" })).toThrow(/review.checkUrl must be an http\(s\) URL/);
  expect(() => printer({ checkUrl: "https://print.example/jobs/{orderId}" })).toThrow(/may use only \{requestIdentity\}, not \{orderId\}/);
  expect(() => printer({ instructions: " " })).toThrow(/review.instructions must be a non-empty sentence/);
});
