/**
 * The demo workflow kind `purchase`: a payment taken, then a wait for the warehouse to dispatch.
 * A purchase cancelled (or failed) after its payment is refunded:
 *
 *   charge (idempotent; undone by a refund at the opaque destination) → dispatch (event wait)
 *
 * The refund's destination cannot be asked afterwards (opaque), so a refund whose answer was lost
 * goes to review rather than being guessed at. The demo traffic does not create purchases; the
 * browser specs do (e2e/compensation.spec.ts). Written against the public package only.
 */
import { z } from "zod";
import { defineWorkflow, effect } from "fenceline";
import type { DemoAdapters } from "./adapters";

export const PURCHASE_KIND = "purchase";
/** The warehouse's event, correlated by the purchase's id; the demo never sends it. */
export const PURCHASE_DISPATCHED = "purchase.dispatched";
const DISPATCH_TIMEOUT_MS = 2 * 86_400_000;

export const purchaseRequestSchema = z.strictObject({
  purchaseId: z.string().trim().min(1).max(100),
  amountCents: z.number().int().positive().max(100_000_000),
});

/** The `purchase` workflow on the synthetic destination's adapters. */
export function purchaseWorkflow(adapters: DemoAdapters) {
  return defineWorkflow({
    kind: PURCHASE_KIND,
    version: 1,
    input: purchaseRequestSchema,
    title: "Purchase {purchaseId}",
    // A purchase that does not go through gets its money back, whichever way it ended.
    compensateOn: "both",
  })
    .step("charge", {
      adapter: adapters.idempotent,
      milestone: { upcoming: "Payment", current: "Taking your payment", done: "Paid", service: "the payment service" },
      run: async (ctx) => effect(await ctx.invoke({ payload: { purchaseId: ctx.input.purchaseId, amountCents: ctx.input.amountCents } })),
      compensate: {
        adapter: adapters.opaque,
        // The charge's receipt holds the payment service's answer: the charge's reference.
        payload: ({ input, result }) => ({ payload: { refund: (result as { externalReference: string }).externalReference, amountCents: input.amountCents } }),
        milestone: { current: "Refunding your payment", done: "Payment refunded" },
      },
    })
    .event("dispatch", {
      dependsOn: ["charge"],
      milestone: { upcoming: "Dispatch", current: "Waiting for the warehouse to dispatch", done: "Dispatched" },
      name: PURCHASE_DISPATCHED,
      key: (ctx) => ctx.input.purchaseId,
      timeoutMs: DISPATCH_TIMEOUT_MS,
      onTimeout: "fail",
    });
}

export type PurchaseWorkflow = ReturnType<typeof purchaseWorkflow>;
