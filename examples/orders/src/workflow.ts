/**
 * The `order` workflow, five steps in a row:
 *
 * 1. **charge**: one external effect at the payment service, deduplicated by the step's request
 *    identity (its `Idempotency-Key`). Undone by a refund if the order is cancelled after it.
 * 2. **reserve**: the stock is reserved (undone by nothing: a cancelled order's reservation lapses
 *    by itself at the warehouse).
 * 3. **confirmed**: an event wait. The request waits, holding no worker, until the warehouse sends
 *    `warehouse.confirmed` for this order's id; at most two days, after which the request fails.
 *    An event sent before the wait begins is kept for it (seven days by default).
 * 4. **cooldown**: a timer. It waits a few seconds on the database clock from when the
 *    confirmation arrived (a real shop would wait days), never less.
 * 5. **review**: a pure step that reads what the two waits produced, typed.
 */
import { z } from "zod";
import { defineSchedule, defineWorkflow, done, effect, httpAdapter } from "fenceline";

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

/** Refunds a charge; deduplicated by `Idempotency-Key` like the charge (its own contract all the same). */
export const refunds = httpAdapter<{ chargeId: string }>({
  name: "refunds",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 8,
  request: { method: "POST", url: `${PAYMENTS_URL}/refunds` },
  identity: { header: "Idempotency-Key" },
});

export const stock = httpAdapter<{ orderId: string }>({
  name: "stock",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 5_000,
  concurrencyLimit: 8,
  request: { method: "POST", url: `${PAYMENTS_URL}/reservations` },
  identity: { header: "Idempotency-Key" },
});

export const order = defineWorkflow({
  kind: "order",
  version: 2,
  input: z.object({ orderId: z.string().min(1).max(100), amountCents: z.number().int().positive() }),
  title: "Order {orderId}",
  // A cancelled order gets back what it paid: each undo runs only for an effect with a receipt.
  compensateOn: "cancel",
})
  .step("charge", {
    adapter: payments,
    milestone: { upcoming: "Payment", current: "Taking your payment", done: "Paid", service: "the payment service" },
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId, amountCents: ctx.input.amountCents })),
    compensate: {
      adapter: refunds,
      // The charge's receipt holds the payment service's answer: the charge's id.
      payload: ({ result }) => ({ chargeId: (result as { id: string }).id }),
      milestone: { current: "Refunding your payment", done: "Payment refunded" },
    },
  })
  .step("reserve", {
    adapter: stock,
    dependsOn: ["charge"],
    milestone: { upcoming: "Stock", current: "Reserving your items", done: "Items reserved", service: "the warehouse" },
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
  })
  .event("confirmed", {
    dependsOn: ["reserve"],
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

/**
 * A stock count the clock starts: every 3 seconds while the demo runs (a real shop: nightly, e.g.
 * `0 2 * * *` in its own time zone). Each request's input carries its due time; a due time starts
 * one request, whichever coordinator reaches it. Registered by `npm run demo` (idempotent: the
 * same definition again is the same schedule), paused when the demo ends.
 */
export const stockCount = defineWorkflow({ kind: "stock-count", version: 1, input: z.object({ dueAt: z.string() }), title: "Stock count due {dueAt}" }).step("count", {
  milestone: { upcoming: "Count", current: "Counting the stock", done: "Stock counted" },
  run: async (ctx) => done({ countedFor: ctx.input.dueAt }),
});

export const stockCountSchedule = defineSchedule(stockCount, {
  name: "orders-stock-count",
  cron: "*/3 * * * * *",
  timeZone: "Europe/Paris",
  input: {},
  dueTimeField: "dueAt",
  overlap: "allow",
  catchUp: "none",
});
