/**
 * The `order` workflow, four steps in a row:
 *
 * 1. **charge**: one external effect at the payment service, deduplicated by the step's request
 *    identity (its `Idempotency-Key`).
 * 2. **confirmed**: an event wait. The request waits, holding no worker, until the warehouse sends
 *    `warehouse.confirmed` for this order's id; at most two days, after which the request fails.
 *    An event sent before the wait begins is kept for it (seven days by default).
 * 3. **cooldown**: a timer. It waits a few seconds on the database clock from when the
 *    confirmation arrived (a real shop would wait days), never less.
 * 4. **review**: a pure step that reads what the two waits produced, typed.
 */
import { z } from "zod";
import { defineWorkflow, done, effect, httpAdapter } from "fenceline";

/** Where the worker finds the payment service (`npm run worker` starts it there). */
export const PAYMENTS_URL = process.env.PAYMENTS_URL ?? "http://127.0.0.1:4310";
/** How long the cooldown timer waits after the warehouse's confirmation. */
export const COOLDOWN_MS = 3_000;
/** The event the warehouse sends, correlated by the order's id. */
export const WAREHOUSE_CONFIRMED = "warehouse.confirmed";

export const payments = httpAdapter<{ orderId: string; amountCents: number }>({
  name: "payments",
  version: "1",
  // It deduplicates by idempotency key: repeating a charge with the same identity charges once.
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 8,
  request: { method: "POST", url: `${PAYMENTS_URL}/charges` },
  identity: { header: "Idempotency-Key" },
});

export const order = defineWorkflow({
  kind: "order",
  version: 1,
  input: z.object({ orderId: z.string().min(1).max(100), amountCents: z.number().int().positive() }),
  title: "Order {orderId}",
})
  .step("charge", {
    adapter: payments,
    milestone: { upcoming: "Payment", current: "Taking your payment", done: "Paid", service: "the payment service" },
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId, amountCents: ctx.input.amountCents })),
  })
  .event("confirmed", {
    dependsOn: ["charge"],
    milestone: { upcoming: "Warehouse", current: "Waiting for the warehouse to confirm", done: "Confirmed by the warehouse" },
    name: WAREHOUSE_CONFIRMED,
    key: (ctx) => ctx.input.orderId,
    payload: z.object({ parcel: z.string().min(1) }),
    timeoutMs: 2 * 24 * 3_600_000,
    onTimeout: "fail",
  })
  .timer("cooldown", {
    dependsOn: ["confirmed"],
    milestone: { upcoming: "Review", current: "We'll ask for your review shortly", done: "Ready for your review" },
    afterMs: COOLDOWN_MS,
  })
  .step("review", {
    dependsOn: ["confirmed", "cooldown"],
    milestone: { upcoming: "Review request", current: "Asking for your review", done: "Review requested" },
    // Typed from the steps it depends on: the event's payload by its schema, the timer's times.
    run: async (ctx) => done({ parcel: ctx.results.confirmed.payload.parcel, askedAt: ctx.results.cooldown.firedAt }),
  });
