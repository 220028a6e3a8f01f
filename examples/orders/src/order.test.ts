/**
 * The order workflow on the real engine and a real PostgreSQL (fenceline/testing), with the payment
 * service running in this process. The test never sleeps: it sends the warehouse's event itself
 * and moves the database clock past the cooldown.
 *
 * Run with `npm test` (node's test runner).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestEnvironment, type TestEnvironment } from "fenceline/testing";
import { startPaymentService, type PaymentService } from "./payments.js";
import type { order as Order } from "./workflow.js";

let payments: PaymentService;
let order: typeof Order;
let env: TestEnvironment;

before(async () => {
  payments = await startPaymentService(0);
  // The workflow reads where the payment service is when it loads.
  process.env.PAYMENTS_URL = payments.url;
  ({ order } = await import("./workflow.js"));
  env = await createTestEnvironment({ workflows: [order] });
});

after(async () => {
  await env?.close();
  await payments?.close();
});

test("an order waits for the warehouse, then for its cooldown, and completes without the test sleeping", async () => {
  const request = await env.createRequest(order, { orderId: "o-1", amountCents: 1_250 });
  const wait = await env.waitForWait(request.id, "confirmed");
  assert.equal(wait.room, "event");
  const sent = await env.sendEvent("warehouse.confirmed", "o-1", { parcel: "P-1" }, { idempotencyKey: "confirmed-o-1" });
  assert.deepEqual(sent.consumedBy, { requestId: request.id, step: "confirmed" });
  await env.waitForWait(request.id, "cooldown");
  assert.equal(await env.passTime(3_000), 1);
  await env.waitForRequest(request.id, "completed");
  assert.equal(payments.charges().length, 1);
});

test("an order cancelled after its charge is refunded once, though the refund's first answer is lost", async () => {
  const request = await env.createRequest(order, { orderId: "o-2", amountCents: 990 });
  await env.waitForWait(request.id, "confirmed");
  const cancelled = await env.cancel(request.id, "the customer cancelled");
  assert.deepEqual(cancelled.compensation?.undos.map((undo) => undo.undoes), ["charge"]);
  const ended = await env.waitForRequest(request.id, "cancelled");
  assert.equal(ended.progress.happening, "This request was cancelled — payment refunded.");
  const charge = payments.charges().find((c) => c.orderId === "o-2")!;
  assert.deepEqual(payments.refunds().map((refund) => refund.chargeId), [charge.id]);
});
