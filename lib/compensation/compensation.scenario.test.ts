/**
 * Undoing a request, decided from receipts (SPEC invariant 12), through fenceline/testing against
 * real PostgreSQL. Properties:
 *
 * - a cancelled order's receipted effects are undone in reverse order of their receipts, each undo
 *   a step with its own receipt, built from the undone step's receipt (its external reference);
 *   the request reads `cancelled` only once every undo has one;
 * - a step stopped before its effect has nothing to undo (the cancel wins the race); a step whose
 *   receipt landed first is undone (the receipt wins);
 * - a completed request is never undone: its cancel is refused, as is a second cancel;
 * - an undo whose answer was lost after the refund applied is retried with the same key: one refund;
 * - an undo at an opaque destination whose answer was lost goes to review, the request with it.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, effect } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination, type TestEnvironment } from "@/lib/sdk/testing";
import { Pool } from "pg";
import { RequestEndedError } from "@/lib/engine/errors";
import { Relay } from "@/lib/webhooks/relay";

const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });
const charges = fakeDestination<{ orderId: string }>("opaque", { name: "charges" });
const refunds = fakeDestination<{ chargeRef: string | null; orderId: string }>("idempotent", { name: "refunds" });
const stock = fakeDestination<{ orderId: string }>("idempotent", { name: "stock" });
const releases = fakeDestination<{ orderId: string }>("fenced", { name: "releases" });
const shipping = fakeDestination<{ orderId: string }>("idempotent", { name: "shipping" });
const opaqueRefunds = fakeDestination<{ orderId: string }>("opaque", { name: "opaque-refunds" });

const order = defineWorkflow({ kind: "comp-order", version: 1, input: z.object({ orderId: z.string() }), compensateOn: "cancel" })
  .step("charge", {
    adapter: charges.adapter,
    milestone: words("Taking payment"),
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
    compensate: {
      adapter: refunds.adapter,
      // The refund names the charge by the reference in the charge's receipt.
      payload: ({ input, externalReference }) => ({ chargeRef: externalReference, orderId: input.orderId }),
      milestone: { current: "Refunding your payment", done: "Payment refunded" },
    },
  })
  .step("reserve", {
    adapter: stock.adapter,
    dependsOn: ["charge"],
    milestone: words("Reserving your items"),
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
    compensate: { adapter: releases.adapter, payload: ({ input }) => ({ orderId: input.orderId }), milestone: { current: "Releasing your items", done: "Items released" } },
  })
  .step("ship", { adapter: shipping.adapter, dependsOn: ["reserve"], milestone: words("Shipping"), run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })) });

const opaqueOrder = defineWorkflow({ kind: "comp-opaque", version: 1, input: z.object({ orderId: z.string() }), compensateOn: "both" })
  .step("charge", {
    adapter: stock.adapter,
    milestone: words("Taking payment"),
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
    compensate: { adapter: opaqueRefunds.adapter, payload: ({ input }) => ({ orderId: input.orderId }), milestone: { current: "Refunding your payment", done: "Payment refunded" } },
  })
  .step("ship", { adapter: shipping.adapter, dependsOn: ["charge"], attemptBudget: 1, milestone: words("Shipping"), run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })) });

const budgetRefunds = fakeDestination<{ orderId: string }>("idempotent", { name: "budget-refunds" });
const budgetOrder = defineWorkflow({ kind: "comp-budget", version: 1, input: z.object({ orderId: z.string() }), compensateOn: "cancel" })
  .step("charge", {
    adapter: stock.adapter,
    milestone: words("Taking payment"),
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
    compensate: { adapter: budgetRefunds.adapter, attemptBudget: 2, payload: ({ input }) => ({ orderId: input.orderId }), milestone: { current: "Refunding your payment", done: "Payment refunded" } },
  })
  .step("ship", { adapter: shipping.adapter, dependsOn: ["charge"], milestone: words("Shipping"), run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })) });

// One step in flight per tenant: undos share the tenant's slots with every other step.
const tenantRefunds = fakeDestination<{ orderId: string }>("idempotent", { name: "tenant-refunds" });
const tenantOrder = defineWorkflow({ kind: "comp-tenant", version: 1, input: z.object({ orderId: z.string() }), compensateOn: "failure", fairShare: { limitPerKey: 1 } })
  .step("charge", {
    adapter: stock.adapter,
    milestone: words("Taking payment"),
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
    compensate: { adapter: tenantRefunds.adapter, payload: ({ input }) => ({ orderId: input.orderId }), milestone: { current: "Refunding your payment", done: "Payment refunded" } },
  })
  .step("ship", { adapter: shipping.adapter, dependsOn: ["charge"], attemptBudget: 1, milestone: words("Shipping"), run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })) });

let env: TestEnvironment;
beforeAll(async () => {
  env = await createTestEnvironment({ workflows: [order, opaqueOrder, budgetOrder, tenantOrder] });
});
afterAll(() => env?.close());

/**
 * Starts a request and cancels it while `step` is in flight, stopped after its request identity
 * and before its call; its lease then expires (the database clock would expire it; the test says
 * when) and recovery ends it from evidence: nothing was called, nothing to undo.
 */
async function cancelWhileInFlight(kind: string, step: string, start: () => Promise<{ id: string }>) {
  const held = env.faults.pauseAt("identity_persisted", { kind, step });
  const request = await start();
  await held.reached;
  const cancelled = await env.cancel(request.id, "customer changed their mind");
  await env.expireLease({ requestId: request.id, step });
  held.resume();
  await env.recover();
  return { request, cancelled };
}

const effectsFor = (destination: { effects: readonly { payload: { orderId: string } }[] }, orderId: string) =>
  destination.effects.filter((e) => e.payload.orderId === orderId).length;

test("a cancel after the charge and the reservation undoes both, last receipt first, and reads cancelled only when both undos have receipts", async () => {
  // The ship step is in flight, stopped before its call: the cancel stops it there.
  const refunding = env.faults.pauseAt("identity_persisted", { kind: "comp-order", step: "charge.undo" });
  const { request, cancelled } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "c-1" }));
  expect(cancelled.status).toBe("cancelling");
  expect(cancelled.compensation).toMatchObject({ cause: "cancel", state: "waiting" });
  expect(cancelled.progress.headline).toMatchObject({ state: "cancelling", label: "Cancelling" });
  // End users read the undo in its own words while it runs, and what was undone once it ended.
  await refunding.reached;
  const midway = await env.progress(request.id);
  expect(midway.happening).toBe("We're cancelling your request — refunding your payment.");
  expect(midway.terminal).toBe(false);
  expect((await env.request(request.id)).status).toBe("cancelling");
  refunding.resume();
  const ended = await env.waitForRequest(request.id, ["cancelled", "failed"]);
  expect(ended.status).toBe("cancelled");
  const undone = await env.compensation(request.id);
  expect(undone?.state).toBe("undone");
  expect(ended.progress).toMatchObject({ headline: { state: "cancelled" }, happening: "This request was cancelled — payment refunded, items released.", terminal: true });
  // Reverse order of receipts: the reservation (received last) is released first.
  expect(undone?.undos.map((u) => [u.rank, u.undoes, u.state])).toEqual([[1, "reserve", "completed"], [2, "charge", "completed"]]);
  expect(undone?.notUndone).toEqual([]);
  const [release, refund] = [await env.step(request.id, "reserve.undo"), await env.step(request.id, "charge.undo")];
  expect(release.receipts).toHaveLength(1);
  expect(refund.receipts).toHaveLength(1);
  expect(release.receipts[0]!.createdAt < refund.receipts[0]!.createdAt).toBe(true);
  // Engineers see each undo beside the step it undoes, with the receipt of the effect undone.
  const charge = await env.step(request.id, "charge");
  expect(refund.undo.undoes).toMatchObject({ step: "charge", stepId: charge.step.id, receiptId: charge.receipts[0]!.id, decidedBy: "receipt (direct response)" });
  expect(charge.undo.undoneBy).toEqual({ stepId: refund.step.id, name: "charge.undo", state: "completed" });
  expect(effectsFor(refunds, "c-1")).toBe(1);
  expect(refunds.effects.find((e) => e.payload.orderId === "c-1")?.payload.chargeRef).toBe(charge.receipts[0]!.externalReference);
  expect(charge.receipts[0]!.externalReference).toMatch(/^charges_\d+$/);
  expect(effectsFor(releases, "c-1")).toBe(1);
  // The ship step never called its destination: nothing of it to undo, nothing shipped.
  expect(effectsFor(shipping, "c-1")).toBe(0);
});

test("a cancel that wins the race against the charge's call leaves nothing to undo; a receipt that wins is undone", async () => {
  // The cancel first: the charge is stopped before its call.
  const { request: first } = await cancelWhileInFlight("comp-order", "charge", () => env.createRequest(order, { orderId: "race-1" }));
  expect((await env.waitForRequest(first.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(charges, "race-1")).toBe(0);
  expect(effectsFor(refunds, "race-1")).toBe(0);
  expect((await env.compensation(first.id))?.undos).toEqual([]);

  // The receipt first: the charge's receipt commits, then the cancel comes while the reservation is in flight.
  const { request: second } = await cancelWhileInFlight("comp-order", "reserve", () => env.createRequest(order, { orderId: "race-2" }));
  expect((await env.waitForRequest(second.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(charges, "race-2")).toBe(1);
  expect(effectsFor(stock, "race-2")).toBe(0);
  expect(effectsFor(refunds, "race-2")).toBe(1);
  const undone = await env.compensation(second.id);
  expect(undone?.undos.map((u) => u.undoes)).toEqual(["charge"]);
  expect(undone?.notUndone).toEqual([{ step: "reserve", why: expect.stringContaining("nothing to undo"), decidedBy: "receipts" }]);
});

test("a completed request is never undone, and a second cancel is refused too", async () => {
  const request = await env.createRequest(order, { orderId: "done-1" });
  await env.waitForRequest(request.id, "completed");
  await expect(env.cancel(request.id)).rejects.toBeInstanceOf(RequestEndedError);
  expect((await env.request(request.id)).status).toBe("completed");
  expect(await env.compensation(request.id)).toBeNull();
  expect(effectsFor(refunds, "done-1")).toBe(0);

  const { request: again } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "twice-1" }));
  await expect(env.cancel(again.id)).rejects.toBeInstanceOf(RequestEndedError);
  await env.waitForRequest(again.id, ["cancelled", "failed"]);
  expect(effectsFor(refunds, "twice-1")).toBe(1);
});

test("a refund whose answer was lost after it applied is retried with the same key: one refund", async () => {
  env.faults.answerLost({ kind: "comp-order", step: "charge.undo" });
  const { request } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "lost-1" }));
  expect((await env.waitForRequest(request.id, ["cancelled", "failed"])).status).toBe("cancelled");
  const refund = await env.step(request.id, "charge.undo");
  expect(refund.attempts.length).toBeGreaterThanOrEqual(2);
  expect(refunds.calls.filter((c) => c.payload.orderId === "lost-1").length).toBeGreaterThanOrEqual(2);
  expect(effectsFor(refunds, "lost-1")).toBe(1);
});

test("a refund at an opaque destination whose answer was lost goes to review, and the request stays there until a person settles it", async () => {
  env.faults.answerLost({ kind: "comp-opaque", step: "charge.undo" });
  const { request } = await cancelWhileInFlight("comp-opaque", "ship", () => env.createRequest(opaqueOrder, { orderId: "opaque-1" }));
  const review = await env.waitForReviewCase(request.id, "charge.undo");
  expect((await env.request(request.id)).status).toBe("cancelling");
  expect((await env.compensation(request.id))?.state).toBe("in_review");
  expect(effectsFor(opaqueRefunds, "opaque-1")).toBe(1);
  await env.resolveReviewCase(review.id, { resolution: "confirm_delivered", externalReference: "refund-seen-by-support", note: "refund visible at the bank" });
  expect((await env.waitForRequest(request.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(opaqueRefunds, "opaque-1")).toBe(1);
});

test("a step whose answer was observed when the cancel came is reconciled into a receipt first, then undone", async () => {
  const held = env.faults.pauseAt("response_observed", { kind: "comp-order", step: "reserve" });
  const request = await env.createRequest(order, { orderId: "observed-1" });
  await held.reached;
  await env.cancel(request.id);
  // The reservation applied and its answer is durable; its receipt is refused (the request is
  // cancelling), so recovery reconciles the answer into one, and only then is the plan made.
  await env.expireLease({ requestId: request.id, step: "reserve" });
  held.resume();
  await env.recover();
  expect((await env.waitForRequest(request.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(stock, "observed-1")).toBe(1);
  expect(effectsFor(releases, "observed-1")).toBe(1);
  expect(effectsFor(refunds, "observed-1")).toBe(1);
  expect((await env.compensation(request.id))?.undos.map((u) => u.undoes)).toEqual(["reserve", "charge"]);
});

test("an effect whose outcome is unknown is settled in review before anything is undone, recorded with who decided", async () => {
  // The opaque charge's answer is lost: its outcome is unknown, a review case. The cancel waits for it.
  env.faults.answerLost({ kind: "comp-order", step: "charge" });
  const delivered = await env.createRequest(order, { orderId: "unknown-1" });
  const first = await env.waitForReviewCase(delivered.id, "charge");
  await env.cancel(delivered.id);
  expect((await env.compensation(delivered.id))?.state).toBe("waiting");
  expect(effectsFor(refunds, "unknown-1")).toBe(0);
  await env.resolveReviewCase(first.id, { resolution: "confirm_delivered", externalReference: "charge-seen" }, { by: "ana@support" });
  expect((await env.waitForRequest(delivered.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(refunds, "unknown-1")).toBe(1);
  expect((await env.compensation(delivered.id))?.undos[0]).toMatchObject({ undoes: "charge", decidedBy: expect.stringContaining("ana@support") });

  env.faults.answerLost({ kind: "comp-order", step: "charge" });
  const absent = await env.createRequest(order, { orderId: "unknown-2" });
  const second = await env.waitForReviewCase(absent.id, "charge");
  await env.cancel(absent.id);
  await env.resolveReviewCase(second.id, { resolution: "confirm_not_delivered", note: "no charge at the bank" }, { by: "bo@support" });
  expect((await env.waitForRequest(absent.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(refunds, "unknown-2")).toBe(0);
  const skipped = await env.compensation(absent.id);
  expect(skipped?.undos).toEqual([]);
  expect(skipped?.notUndone).toContainEqual({ step: "charge", why: expect.stringContaining("review"), decidedBy: expect.stringContaining("bo@support") });
  expect(skipped?.notUndone).toContainEqual({ step: "reserve", why: expect.stringContaining("nothing to undo"), decidedBy: "receipts" });
});

test("a refund that keeps failing past its budget leaves the request in review, never cancelled", async () => {
  budgetRefunds.reset();
  env.faults.definiteFailure({ kind: "comp-budget", step: "charge.undo", times: 2 }, { status: 422, detail: "card closed" });
  const { request } = await cancelWhileInFlight("comp-budget", "ship", () => env.createRequest(budgetOrder, { orderId: "budget-1" }));
  const review = await env.waitForReviewCase(request.id, "charge.undo");
  expect(review.reason).toContain("past its attempt budget");
  expect((await env.request(request.id)).status).toBe("cancelling");
  expect((await env.compensation(request.id))?.state).toBe("in_review");
  expect(effectsFor(budgetRefunds, "budget-1")).toBe(0);
});

test("a request that fails after its charge is undone when its workflow says so, and reads failed once refunded", async () => {
  env.faults.definiteFailure({ kind: "comp-opaque", step: "ship" }, { status: 422, detail: "no courier" });
  const request = await env.createRequest(opaqueOrder, { orderId: "fail-1" });
  const ended = await env.waitForRequest(request.id, "failed");
  expect(ended.status).toBe("failed");
  const undone = await env.compensation(request.id);
  expect(undone).toMatchObject({ cause: "failure", state: "undone" });
  expect(effectsFor(opaqueRefunds, "fail-1")).toBe(1);
});

test("an undo counts against its tenant's limit: while one is in flight, the tenant's next step waits behind it", async () => {
  env.faults.definiteFailure({ kind: "comp-tenant", step: "ship", times: 2 }, { status: 422, detail: "no courier" });
  const refunding = env.faults.pauseAt("identity_persisted", { kind: "comp-tenant", step: "charge.undo" });
  const first = await env.createRequest(tenantOrder, { orderId: "tenant-1" }, { concurrencyKey: "tenant-a" });
  await refunding.reached;
  // The first request's undo holds tenant-a's one slot; the second request's charge queues behind it.
  const second = await env.createRequest(tenantOrder, { orderId: "tenant-2" }, { concurrencyKey: "tenant-a" });
  const [undo, queued] = [await env.step(first.id, "charge.undo"), await env.step(second.id, "charge")];
  expect(undo.step).toMatchObject({ state: "leased", concurrencyKey: "tenant-a" });
  expect(queued.step).toMatchObject({ state: "ready", nextEligibleAt: null, stateReason: expect.stringContaining("queued behind concurrency key tenant-a") });
  refunding.resume();
  expect((await env.waitForRequest(first.id, "failed")).status).toBe("failed");
  expect((await env.waitForRequest(second.id, "failed")).status).toBe("failed");
  expect([effectsFor(tenantRefunds, "tenant-1"), effectsFor(tenantRefunds, "tenant-2")]).toEqual([1, 1]);
});

test("webhooks say what was undone and what is still open, and a last event says when undoing finished", async () => {
  const { request } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "hook-1" }));
  await env.waitForRequest(request.id, ["cancelled", "failed"]);
  const pool = new Pool({ connectionString: env.databaseUrl, options: "-c search_path=fenceline,public" });
  try {
    await new Relay(pool, "compensation-test").prepare();
    const { rows } = await pool.query<{ type: string; body: { data: { undo?: unknown; progress: { headline: { state: string } } } } }>(
      "SELECT type, body FROM outbox_event WHERE workflow_id = $1 ORDER BY created_at, id",
      [request.id],
    );
    expect(rows.map((row) => row.type)).toEqual(["request.cancelled", "request.undone"]);
    // Prepared after the fact, both read the request as it is now: everything undone, nothing open.
    expect(rows[1]!.body.data.undo).toEqual({ state: "undone", undone: ["reserve", "charge"], open: [], notUndone: [] });
    expect(rows[1]!.body.data.progress.headline.state).toBe("cancelled");
  } finally {
    await pool.end();
  }
});

test("a refund whose worker dies after the destination applied it is retried with its key: one refund", async () => {
  const killed = env.faults.killAt("destination_answered", { kind: "comp-order", step: "charge.undo" });
  const { request } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "killed-1" }));
  const victim = await killed.reached;
  await env.expireLease(victim);
  await env.recover();
  expect((await env.waitForRequest(request.id, ["cancelled", "failed"])).status).toBe("cancelled");
  expect(effectsFor(refunds, "killed-1")).toBe(1);
  expect((await env.step(request.id, "charge.undo")).receipts[0]!.verificationMethod).toBe("idempotent_replay");
});

test("stale undo workers that come back after their replacements finished cause no second effect at fenced and idempotent destinations", async () => {
  // Each undo is stopped just after its invocation began, loses its lease, and is replaced; the
  // originals then go on and call their destinations with their old terms and keys.
  const release = env.faults.pauseAt("invocation_began", { kind: "comp-order", step: "reserve.undo" });
  const refund = env.faults.pauseAt("invocation_began", { kind: "comp-order", step: "charge.undo" });
  const { request } = await cancelWhileInFlight("comp-order", "ship", () => env.createRequest(order, { orderId: "stale-1" }));
  const staleRelease = await release.reached;
  await env.expireLease(staleRelease);
  await env.recover();
  const staleRefund = await refund.reached;
  release.resume();
  await env.expireLease(staleRefund);
  await env.recover();
  expect((await env.waitForRequest(request.id, ["cancelled", "failed"])).status).toBe("cancelled");
  refund.resume();
  await env.waitForStep(request.id, "charge.undo", "the stale refund's write to be refused", (detail) => detail.leases.some((lease) => lease.rejections.length > 0));
  await env.waitForStep(request.id, "reserve.undo", "the stale release's write to be refused", (detail) => detail.leases.some((lease) => lease.rejections.length > 0));
  expect(effectsFor(releases, "stale-1")).toBe(1);
  expect(releases.calls.filter((call) => call.payload.orderId === "stale-1").map((call) => call.outcome)).toContain("stale_term_rejected");
  expect(effectsFor(refunds, "stale-1")).toBe(1);
  expect(refunds.calls.filter((call) => call.payload.orderId === "stale-1").map((call) => call.outcome)).toContain("replayed");
});
