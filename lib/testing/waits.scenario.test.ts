/**
 * fenceline/testing with steps that wait: a test sends events and lets the database clock pass
 * for timers and timeouts without sleeping, and reads what each step waited for. Properties:
 *
 * - an order that charges, waits for the warehouse's event, then sleeps three days, completes in
 *   a test that never sleeps; the timer fires only once the clock has passed its time;
 * - an event sent twice with one idempotency key is one event, taken by one wait;
 * - a wait that times out with `continue` lets the next step read that it timed out.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, done, effect } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination, type TestEnvironment } from "@/lib/sdk/testing";

const DAY = 24 * 3_600_000;
const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });
const payments = fakeDestination<{ orderId: string }>("idempotent", { name: "payments" });

const order = defineWorkflow({ kind: "order", version: 1, input: z.object({ orderId: z.string() }) })
  .step("charge", { adapter: payments.adapter, milestone: words("Taking payment"), run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })) })
  .event("confirmed", {
    dependsOn: ["charge"],
    milestone: words("Waiting for the warehouse"),
    name: "warehouse.confirmed",
    key: (ctx) => ctx.input.orderId,
    payload: z.object({ parcel: z.string() }),
    timeoutMs: 2 * DAY,
    onTimeout: "continue",
  })
  .timer("cooldown", { dependsOn: ["confirmed"], milestone: words("Waiting a few days"), afterMs: 3 * DAY })
  .step("review", {
    dependsOn: ["confirmed", "cooldown"],
    milestone: words("Asking for a review"),
    run: async (ctx) => done({ parcel: ctx.results.confirmed.received ? ctx.results.confirmed.payload.parcel : null, after: ctx.results.cooldown.firedAt }),
  });

let env: TestEnvironment;
beforeAll(async () => {
  env = await createTestEnvironment({ workflows: [order] });
});
afterAll(() => env?.close());

test("an order waits for the warehouse, then three days, in a test that never sleeps", async () => {
  const request = await env.createRequest(order, { orderId: "o-1" });
  const confirmed = await env.waitForWait(request.id, "confirmed");
  expect(confirmed).toMatchObject({ room: "event", state: "waiting", name: "warehouse.confirmed", key: "o-1", onTimeout: "continue" });
  const sent = await env.sendEvent("warehouse.confirmed", "o-1", { parcel: "P-1" }, { idempotencyKey: "warehouse-o-1" });
  expect(sent.consumedBy).toEqual({ requestId: request.id, step: "confirmed" });
  const cooldown = await env.waitForWait(request.id, "cooldown");
  expect(cooldown).toMatchObject({ room: "timer", state: "waiting", requested: { afterMs: 3 * DAY } });
  // A day short of its time, nothing fires; past it, the timer fires and the order completes.
  expect(await env.passTime(2 * DAY)).toBe(0);
  expect((await env.waitOf(request.id, "cooldown"))?.state).toBe("waiting");
  expect(await env.passTime(DAY)).toBe(1);
  const done = await env.waitForRequest(request.id, "completed");
  expect(done.status).toBe("completed");
  expect((await env.step(request.id, "review")).receipts[0]?.observedResult).toEqual({ parcel: "P-1", after: expect.any(String) });
  expect((await env.waitOf(request.id, "cooldown"))?.state).toBe("fired");
});

test("an event sent twice with one idempotency key is one event, taken by one wait", async () => {
  const [first, second] = await Promise.all([env.createRequest(order, { orderId: "o-2" }), env.createRequest(order, { orderId: "o-2" })]);
  await Promise.all([env.waitForWait(first.id, "confirmed"), env.waitForWait(second.id, "confirmed")]);
  const a = await env.sendEvent("warehouse.confirmed", "o-2", { parcel: "P-2" }, { idempotencyKey: "once" });
  const b = await env.sendEvent("warehouse.confirmed", "o-2", { parcel: "P-2" }, { idempotencyKey: "once" });
  expect(b).toEqual({ ...a, duplicate: true });
  const states = await Promise.all([env.waitOf(first.id, "confirmed"), env.waitOf(second.id, "confirmed")]);
  expect(states.map((wait) => wait?.state).sort()).toEqual(["received", "waiting"]);
});

test("a wait that times out lets the next steps read that no event came", async () => {
  const request = await env.createRequest(order, { orderId: "o-3" });
  await env.waitForWait(request.id, "confirmed");
  // The clock passes for every request of the environment: the earlier test's second wait times out too.
  expect(await env.passTime(2 * DAY)).toBeGreaterThanOrEqual(1);
  expect((await env.waitOf(request.id, "confirmed"))?.state).toBe("timed_out");
  await env.waitForWait(request.id, "cooldown");
  await env.passTime(3 * DAY);
  await env.waitForRequest(request.id, "completed");
  expect((await env.step(request.id, "review")).receipts[0]?.observedResult).toMatchObject({ parcel: null });
});
