/**
 * The definitions module of the worker processes in lib/worker/fair-share.scenario.test.ts:
 * `limited`, whose steps work for `input.ms` under a limit of FAIR_SHARE_LIMIT per concurrency
 * key, and `rated`, whose one step calls the counting destination at FAIR_SHARE_DESTINATION_URL
 * through an adapter that declares FAIR_SHARE_RATE calls a second. Test support only.
 */
import { z } from "zod";
import { defineAdapter, defineWorkflow, done, effect } from "fenceline";
import { abortableSleep } from "./abortable-sleep";

export const FAIR_SHARE_LIMIT = 3;
export const FAIR_SHARE_RATE = { perSecond: 10, burst: 4 } as const;

const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };

export const limited = defineWorkflow({
  kind: "fair-limited",
  version: 1,
  input: z.object({ ms: z.number().int().min(0) }),
  fairShare: { limitPerKey: FAIR_SHARE_LIMIT },
  steps: {
    work: {
      milestone,
      run: async (ctx) => {
        await abortableSleep(ctx.input.ms, ctx.signal);
        return done();
      },
    },
  },
});

export const countingDestination = defineAdapter<{ n: number }>({
  name: "counting-destination",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 100,
  rate: FAIR_SHARE_RATE,
  invoke: async ({ payload, requestIdentity, signal }) => {
    const response = await fetch(`${process.env.FAIR_SHARE_DESTINATION_URL}/call`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": requestIdentity },
      body: JSON.stringify(payload),
      signal,
    });
    if (!response.ok) throw new Error(`destination answered ${response.status}`);
    return { externalReference: requestIdentity };
  },
});

export const rated = defineWorkflow({
  kind: "fair-rated",
  version: 1,
  input: z.object({ n: z.number().int() }),
  steps: {
    call: {
      adapter: countingDestination,
      milestone,
      run: async (ctx) => effect(await ctx.invoke({ n: ctx.input.n })),
    },
  },
});
