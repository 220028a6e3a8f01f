/**
 * The `welcome` workflow: write a greeting card (a pure step: computation only, safe to run
 * again), then send it through the greeting card service (one external effect, deduplicated by
 * the step's request identity). The adapter declares what the service promises; if an answer is
 * lost, Fenceline decides from that promise what happens next.
 */
import { z } from "zod";
import { defineWorkflow, done, effect, httpAdapter } from "fenceline";

/** Where the worker finds the greeting card service (`npm run worker` starts it there). */
export const GREETINGS_URL = process.env.GREETINGS_URL ?? "http://127.0.0.1:4300";

// An HTTP API described, not hand-written: the step's request identity goes out as its
// Idempotency-Key, the card's id comes back as the reference, and httpAdapter's table says what
// each other answer means (a 4xx applied nothing; a timeout or a 5xx may have).
export const greetings = httpAdapter<{ to: string; text: string }>({
  name: "greetings",
  version: "1",
  // It deduplicates by idempotency key, so repeating a call with the same identity is harmless.
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 4,
  request: { method: "POST", url: `${GREETINGS_URL}/cards` },
  identity: { header: "Idempotency-Key" },
});

const HELLO = { en: "Welcome", fr: "Bienvenue", de: "Willkommen" } as const;

// Written a step at a time, each step's result is typed for the steps that depend on it:
// `send` reads `ctx.results.compose.text` as a string, with no cast.
export const welcome = defineWorkflow({
  kind: "welcome",
  version: 1,
  input: z.object({
    name: z.string().trim().min(1).max(100),
    language: z.enum(["en", "fr", "de"]).default("en"),
  }),
  title: "Welcome card for {name}",
})
  .step("compose", {
    milestone: { upcoming: "Your card", current: "Writing your card", done: "Card written" },
    run: async (ctx) => done({ text: `${HELLO[ctx.input.language]}, ${ctx.input.name}!` }),
  })
  .step("send", {
    adapter: greetings,
    dependsOn: ["compose"],
    milestone: { upcoming: "Sending", current: "Sending your card", done: "Card sent", service: "the greeting card service" },
    run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.name, text: ctx.results.compose.text })),
  });
