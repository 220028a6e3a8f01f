/**
 * The demo workflow kind `delivery`: one message delivered to a recipient through one of the
 * synthetic destination's contracts, chosen per request. Its steps run in a line:
 *
 *   prepare (pure) → reserve (fenced) → deliver (idempotent | queryable | opaque) → notify (idempotent)
 *
 * Written against the public package only, as an adopter writes theirs.
 */
import { z } from "zod";
import { chooseAdapter, defineWorkflow, done, effect } from "fenceline";
import type { DemoAdapters } from "./adapters";

export const DELIVERY_KIND = "delivery";

/** The destination contracts a delivery can go through; each recovers differently. */
export const DELIVER_VIA = ["idempotent", "queryable", "opaque"] as const;
export type DeliverVia = (typeof DELIVER_VIA)[number];

const MAX_RECIPIENT_LENGTH = 200;
const MAX_MESSAGE_LENGTH = 2_000;

const requiredString = (issue: { input: unknown }) => (issue.input === undefined ? "required" : "must be a string");

export const deliveryRequestSchema = z.strictObject(
  {
    recipient: z
      .string({ error: requiredString })
      .trim()
      .min(1, "must not be empty")
      .max(MAX_RECIPIENT_LENGTH, `must be at most ${MAX_RECIPIENT_LENGTH} characters`),
    message: z
      .string({ error: requiredString })
      .min(1, "must not be empty")
      .max(MAX_MESSAGE_LENGTH, `must be at most ${MAX_MESSAGE_LENGTH} characters`),
    deliverVia: z
      .enum(DELIVER_VIA, { error: (issue) => `must be one of ${DELIVER_VIA.join(", ")}, got ${JSON.stringify(issue.input)}` })
      .default("idempotent"),
  },
  { error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field ${issue.keys.map((key) => `"${key}"`).join(", ")}` : "must be an object") },
);
/** A delivery request as a client sends it (deliverVia may be left out). */
export type DeliveryRequest = z.input<typeof deliveryRequestSchema>;

/** The `delivery` workflow on the synthetic destination's adapters. */
export function deliveryWorkflow(adapters: DemoAdapters) {
  return defineWorkflow({
    kind: DELIVERY_KIND,
    version: 1,
    input: deliveryRequestSchema,
    title: "Delivery to {recipient}",
    steps: {
      prepare: {
        milestone: { upcoming: "Request received", current: "Checking your request", done: "Request received" },
        run: async (ctx) => done({ prepared: { recipient: ctx.input.recipient, message: ctx.input.message } }),
      },
      reserve: {
        adapter: adapters.fenced,
        dependsOn: ["prepare"],
        milestone: { upcoming: "Reservation", current: "Reserving", done: "Reserved", service: "the reservation service" },
        // The fencing term is per step, so the resource it guards must be too: two steps sharing
        // one would refuse each other's terms.
        run: async (ctx) => effect(await ctx.invoke({ payload: { recipient: ctx.input.recipient }, resource: ctx.stepId })),
      },
      deliver: {
        adapter: chooseAdapter("deliverVia", { idempotent: adapters.idempotent, queryable: adapters.queryable, opaque: adapters.opaque }),
        dependsOn: ["reserve"],
        milestone: { upcoming: "Delivery", current: "Delivering", done: "Delivered", service: "the delivery service" },
        run: async (ctx) => effect(await ctx.invoke({ payload: { recipient: ctx.input.recipient, message: ctx.input.message } })),
      },
      notify: {
        adapter: adapters.idempotent,
        dependsOn: ["deliver"],
        milestone: { upcoming: "Confirmation", current: "Sending confirmation", done: "Confirmation sent", service: "the notification service" },
        run: async (ctx) => effect(await ctx.invoke({ payload: { recipient: ctx.input.recipient, event: "delivered" } })),
      },
    },
  });
}

export type DeliveryWorkflow = ReturnType<typeof deliveryWorkflow>;
