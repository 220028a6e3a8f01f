/**
 * The demo's purchase as defined: its payment is undone by a refund at the opaque destination
 * (whose lost answer goes to review), on a cancel or a failure, and the refund names the charge
 * by the reference the payment service answered with.
 */
import { expect, test } from "vitest";
import { demoAdapters } from "./adapters";
import { purchaseRequestSchema, purchaseWorkflow } from "./purchase";

test("charges, then waits for the warehouse; a cancel or a failure refunds the charge at the opaque destination", () => {
  const purchase = purchaseWorkflow(demoAdapters("http://127.0.0.1:9"));
  expect(purchase).toMatchObject({ kind: "purchase", version: 1, title: "Purchase {purchaseId}", compensateOn: "both" });
  expect(purchase.steps.map((step) => [step.name, step.dependsOn])).toEqual([
    ["charge", []],
    ["dispatch", ["charge"]],
  ]);
  const [charge] = purchase.steps;
  expect(charge!.adapter).toMatchObject({ name: "idempotent" });
  expect(charge!.compensate).toMatchObject({ adapter: { name: "opaque" }, milestone: { current: "Refunding your payment", done: "Payment refunded" } });
  const input = purchaseRequestSchema.parse({ purchaseId: " p-1 ", amountCents: 4_200 });
  expect(charge!.compensate!.payload({ input, result: { externalReference: "idm-7" }, externalReference: "idm-7" })).toEqual({ payload: { refund: "idm-7", amountCents: 4_200 } });
});
