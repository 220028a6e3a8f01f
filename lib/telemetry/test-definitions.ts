/**
 * The definitions module of traced worker processes under test (lib/telemetry/otlp.scenario.test.ts):
 * one step on the `fast` step class that calls an HTTP destination through httpAdapter, at
 * TRACE_TEST_DESTINATION_URL. Test support only.
 */
import { z } from "zod";
import { defineWorkflow, effect, httpAdapter } from "fenceline";
import { FAST_CLASS } from "@/lib/worker/test-definitions";

const destination = httpAdapter<{ orderId: string; note: string }>({
  name: "otlp-destination",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 2_000,
  concurrencyLimit: 8,
  request: { url: () => `${process.env.TRACE_TEST_DESTINATION_URL}/orders` },
});

export const tracedCall = defineWorkflow({
  kind: "otlp-traced-call",
  version: 1,
  input: z.object({ orderId: z.string(), note: z.string() }),
  steps: {
    send: {
      class: FAST_CLASS.name,
      adapter: destination,
      milestone: { upcoming: "Sending", current: "Sending it", done: "Sent" },
      run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId, note: ctx.input.note })),
    },
  },
});
