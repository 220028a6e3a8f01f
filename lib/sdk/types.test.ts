/**
 * Types that carry, checked by the compiler (`npm run typecheck`, the first part of `npm test`):
 * each `@ts-expect-error` below is a line that must not compile, so the typecheck fails the day
 * it does. The runtime test only makes the file part of the vitest run; the property is the types.
 *
 * - A client bound once to the app's workflows (`createClient<typeof workflows>`) checks each
 *   `requests.create(kind, input)` against that kind's input, with no generic on the call; a kind
 *   it is not bound to does not compile. An unbound client keeps the per-call form.
 * - A step's result type (what `run` returns through `done`/`effect`) reaches the steps that
 *   depend on it (`ctx.results.price.totalCents`, no cast); a step that does not depend on
 *   `price` cannot read it; a timer's and an event wait's results are typed too.
 */
import { describe, expect, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { defineAdapter, defineWorkflow, done, effect, type WorkflowResults } from "fenceline";
import { createClient, type FencelineClient } from "fenceline/client";

const receiptBook = defineAdapter<{ orderId: string; totalCents: number }, { receiptNumber: string }>({
  name: "receipt-book",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 1_000,
  concurrencyLimit: 1,
  invoke: async () => ({ externalReference: "r-1", result: { receiptNumber: "R-1" } }),
});

const milestone = { upcoming: "Soon", current: "Now", done: "Done" };

const order = defineWorkflow({ kind: "order", version: 1, input: z.object({ orderId: z.string(), quantity: z.number().int() }) })
  .step("price", {
    milestone,
    run: async (ctx) => done({ totalCents: ctx.input.quantity * 250, currency: "EUR" as const }),
  })
  .step("charge", {
    milestone,
    dependsOn: ["price"],
    adapter: receiptBook,
    run: async (ctx) => {
      expectTypeOf(ctx.results.price.totalCents).toEqualTypeOf<number>();
      expectTypeOf(ctx.results.price.currency).toEqualTypeOf<"EUR">();
      return effect(await ctx.invoke({ orderId: ctx.input.orderId, totalCents: ctx.results.price.totalCents }));
    },
  })
  .step("thank", {
    milestone,
    dependsOn: ["charge"],
    run: async (ctx) => {
      expectTypeOf(ctx.results.charge.receiptNumber).toEqualTypeOf<string>();
      // @ts-expect-error: "thank" does not depend on "price", so it cannot read its result.
      void ctx.results.price;
      return done();
    },
  })
  .timer("cool", { milestone, dependsOn: ["thank"], afterMs: 1_000 });

const refund = defineWorkflow({ kind: "refund", version: 1, input: z.object({ receiptNumber: z.string(), amountCents: z.number() }) }).step("pay", {
  milestone,
  run: async () => done(),
});

const workflows = { order, refund };

describe("types that carry", () => {
  test("a bound client checks each create against the workflow of its kind, and refuses other kinds", () => {
    const client = createClient<typeof workflows>({ url: "http://127.0.0.1:1", apiKey: "fl_app_x" });
    const checked = () => {
      void client.requests.create("order", { orderId: "o-1", quantity: 2 });
      void client.requests.create("refund", { receiptNumber: "R-1", amountCents: 500 }, { idempotencyKey: "refund-R-1" });
      // @ts-expect-error: "shipment" is not a kind this client is bound to.
      void client.requests.create("shipment", { orderId: "o-1" });
      // @ts-expect-error: an order's input has no amountCents, and needs quantity.
      void client.requests.create("order", { orderId: "o-1", amountCents: 5 });
      // @ts-expect-error: quantity is a number.
      void client.requests.create("order", { orderId: "o-1", quantity: "2" });
    };
    // Bound to an array of workflows, or to one, the same.
    const listed = createClient<[typeof order, typeof refund]>({ url: "http://127.0.0.1:1", apiKey: "fl_app_x" });
    const single = createClient<typeof refund>({ url: "http://127.0.0.1:1", apiKey: "fl_app_x" });
    const alsoChecked = () => {
      void listed.requests.create("refund", { receiptNumber: "R-2", amountCents: 1 });
      // @ts-expect-error: not among the array's kinds.
      void listed.requests.create("shipment", {});
      // @ts-expect-error: a client bound to refund alone cannot start an order.
      void single.requests.create("order", { orderId: "o-1", quantity: 1 });
    };
    expectTypeOf(client).toEqualTypeOf<FencelineClient<typeof workflows>>();
    expect([typeof checked, typeof alsoChecked]).toEqual(["function", "function"]);
  });

  test("an unbound client keeps the per-call form, checked against the named workflow", () => {
    const client = createClient({ url: "http://127.0.0.1:1", apiKey: "fl_app_x" });
    const checked = () => {
      void client.requests.create<typeof order>("order", { orderId: "o-1", quantity: 2 });
      // @ts-expect-error: the named workflow's input needs quantity.
      void client.requests.create<typeof order>("order", { orderId: "o-1" });
      // Unbound and unnamed, any kind and input compile: the server checks them.
      void client.requests.create("anything", { at: "all" });
    };
    expect(typeof checked).toBe("function");
  });

  test("a workflow's results are typed by step: an effect's observed answer, a pure step's done, a timer's times", () => {
    type Results = WorkflowResults<typeof order>;
    expectTypeOf<Results["price"]>().toEqualTypeOf<{ totalCents: number; currency: "EUR" }>();
    expectTypeOf<Results["charge"]>().toEqualTypeOf<{ receiptNumber: string }>();
    expectTypeOf<Results["thank"]>().toEqualTypeOf<null>();
    expectTypeOf<Results["cool"]["dueAt"]>().toEqualTypeOf<string>();
    expect(order.steps.map((step) => step.name)).toEqual(["price", "charge", "thank", "cool"]);
  });
});
