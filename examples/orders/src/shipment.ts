/**
 * The `shipment` workflow: an order's parcels, each prepared as a request of its own.
 *
 * 1. **parcels**: a child step. It starts one `parcel` request per element of the input's list
 *    (at most 20 here), each of the shipment's app, priority and concurrency key, and waits,
 *    holding no worker, until they have all ended. A parcel that fails fails the shipment (the
 *    default `onChildFailure: "fail"`); cancelling the shipment cancels the parcels still running.
 *    Its end user sees one line: "Preparing 2 of 5 parcels".
 * 2. **dispatch**: a pure step that reads every parcel's label, typed by the parcel workflow.
 *
 * A parcel is started at most once per (step, index): a retry, a killed worker or a recovery by
 * another worker never starts a second one.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";

export const parcel = defineWorkflow({ kind: "parcel", version: 1, input: z.object({ orderId: z.string().min(1), parcel: z.string().min(1) }), title: "Parcel {parcel}" }).step(
  "label",
  {
    milestone: { upcoming: "Label", current: "Printing the label", done: "Labelled" },
    run: async (ctx) => done({ label: `${ctx.input.orderId}/${ctx.input.parcel}` }),
  },
);

export const shipment = defineWorkflow({
  kind: "shipment",
  version: 1,
  input: z.object({ orderId: z.string().min(1).max(100), parcels: z.array(z.string().min(1)).min(1).max(20) }),
  title: "Shipment for order {orderId}",
})
  .children("parcels", {
    milestone: { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" },
    workflow: parcel,
    each: (ctx) => ctx.input.parcels,
    input: (ctx, name) => ({ orderId: ctx.input.orderId, parcel: name }),
    maxChildren: 20,
  })
  .step("dispatch", {
    dependsOn: ["parcels"],
    milestone: { upcoming: "Dispatch", current: "Dispatching", done: "Dispatched" },
    run: async (ctx) => done({ labels: ctx.results.parcels.children.map((child) => child.results.label.label) }),
  });
