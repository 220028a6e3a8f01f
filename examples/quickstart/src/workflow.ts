/**
 * The `welcome` workflow: write a greeting card (a pure step: computation only, safe to run
 * again), then send it through the greeting card service (one external effect, deduplicated by
 * the step's request identity). The adapter declares what the service promises; if an answer is
 * lost, Fenceline decides from that promise what happens next.
 */
import { z } from "zod";
import { DefiniteFailure, defineAdapter, defineWorkflow, done, effect, UnknownOutcome } from "fenceline";
import type { Card } from "./greetings.js";

/** Where the worker finds the greeting card service (`npm run worker` starts it there; a test, elsewhere). */
export const greetingsUrl = (): string => process.env.GREETINGS_URL ?? "http://127.0.0.1:4300";

export const greetings = defineAdapter<{ to: string; text: string }>({
  name: "greetings",
  version: "1",
  // It deduplicates by idempotency key, so repeating a call with the same identity is harmless.
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 4,
  invoke: async ({ payload, requestIdentity, signal }) => {
    let response: Response;
    try {
      response = await fetch(`${greetingsUrl()}/cards`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": requestIdentity },
        body: JSON.stringify(payload),
        signal,
      });
    } catch (error) {
      // The request may have arrived: only the contract can say whether to send it again.
      throw new UnknownOutcome("greetings", signal.aborted ? "aborted" : "connection lost", { cause: error });
    }
    if (response.status === 200 || response.status === 201) {
      const card = (await response.json()) as Card;
      return { externalReference: card.id, result: card, replayed: response.headers.get("idempotent-replayed") === "true" };
    }
    if (response.status >= 400 && response.status < 500) throw new DefiniteFailure("greetings", response.status, await response.text());
    throw new UnknownOutcome("greetings", "unreadable answer");
  },
});

const HELLO = { en: "Welcome", fr: "Bienvenue", de: "Willkommen" } as const;

export const welcome = defineWorkflow({
  kind: "welcome",
  version: 1,
  input: z.object({
    name: z.string().trim().min(1).max(100),
    language: z.enum(["en", "fr", "de"]).default("en"),
  }),
  title: "Welcome card for {name}",
  steps: {
    compose: {
      milestone: { upcoming: "Your card", current: "Writing your card", done: "Card written" },
      run: async (ctx) => done({ text: `${HELLO[ctx.input.language]}, ${ctx.input.name}!` }),
    },
    send: {
      adapter: greetings,
      dependsOn: ["compose"],
      milestone: { upcoming: "Sending", current: "Sending your card", done: "Card sent", service: "the greeting card service" },
      run: async (ctx) => {
        const { text } = ctx.results.compose as { text: string };
        return effect(await ctx.invoke({ to: ctx.input.name, text }));
      },
    },
  },
});
