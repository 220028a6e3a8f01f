/**
 * The definitions module of worker processes in the children scenarios (lib/worker/test-process.ts):
 * an order that fans out one parcel request per element of its input, on the `fast` step class
 * (a 1.5 s lease), written against the public package. Test support only.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";
import { FAST_CLASS } from "@/lib/worker/test-definitions";

const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };

export const scenarioParcel = defineWorkflow({ kind: "scenario-parcel", version: 1, input: z.object({ parcel: z.string() }) }).step("pack", {
  class: FAST_CLASS.name,
  milestone,
  run: async (ctx) => done({ packed: ctx.input.parcel }),
});

export const scenarioOrder = defineWorkflow({ kind: "scenario-order", version: 1, input: z.object({ parcels: z.array(z.string()).max(50) }) })
  .children("ship", {
    class: FAST_CLASS.name,
    milestone: { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" },
    workflow: scenarioParcel,
    each: (ctx) => ctx.input.parcels,
    input: (_ctx, parcel) => ({ parcel }),
    maxChildren: 50,
  })
  .step("confirm", {
    class: FAST_CLASS.name,
    dependsOn: ["ship"],
    milestone,
    run: async (ctx) => done({ packed: ctx.results.ship.children.map((child) => child.results.pack.packed) }),
  });
