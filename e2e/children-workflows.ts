/**
 * The definitions module e2e/children.spec.ts runs a worker for (FENCELINE_DEFINITIONS): a
 * shipment starts one `box` request per item; a box waits `napMs` on the database clock, then is
 * packed. Written against the public package only.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";

const words = (current: string, finished: string) => ({ upcoming: current, current, done: finished });

export const box = defineWorkflow({ kind: "box", version: 1, input: z.object({ item: z.string(), napMs: z.number().int().min(0) }) })
  .timer("wait", { milestone: words("Waiting for the packer", "Packer ready"), afterMs: (ctx) => ctx.input.napMs })
  .step("pack", { dependsOn: ["wait"], milestone: words("Packing", "Packed"), run: async (ctx) => done({ item: ctx.input.item }) });

export const shipment = defineWorkflow({ kind: "shipment", version: 1, input: z.object({ items: z.array(z.object({ item: z.string(), napMs: z.number().int().min(0) })).max(10) }) })
  .children("boxes", {
    milestone: { upcoming: "Boxes", current: "Preparing {ended} of {total} boxes", done: "Boxes prepared" },
    workflow: box,
    each: (ctx) => ctx.input.items,
    input: (_ctx, item) => item,
    maxChildren: 10,
  })
  .step("send", { dependsOn: ["boxes"], milestone: words("Sending", "Sent"), run: async (ctx) => done({ items: ctx.results.boxes.children.map((child) => child.results.pack.item) }) });
