/**
 * The definitions module e2e/waits.spec.ts runs a worker for (FENCELINE_DEFINITIONS): a parcel is
 * packed, waits for the courier's `courier.collected` event (keyed by the parcel id, with a
 * one-time URL), then waits `napMs` before a last step. Written against the public package only.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";

const words = (current: string, finished: string) => ({ upcoming: current, current, done: finished });

export const parcel = defineWorkflow({ kind: "parcel", version: 1, input: z.object({ parcelId: z.string(), napMs: z.number().int().min(0) }) })
  .step("pack", { milestone: words("Packing", "Packed"), run: async (ctx) => done({ parcelId: ctx.input.parcelId }) })
  .event("collected", {
    dependsOn: ["pack"],
    milestone: words("Waiting for the courier", "Collected"),
    name: "courier.collected",
    key: (ctx) => ctx.results.pack.parcelId,
    payload: z.object({ by: z.string() }),
    timeoutMs: 24 * 3_600_000,
    url: true,
  })
  .timer("settle", { dependsOn: ["collected"], milestone: words("Letting it settle", "Settled"), afterMs: (ctx) => ctx.input.napMs })
  .step("thank", { dependsOn: ["settle"], milestone: words("Thanking you", "Thanked"), run: async () => done({ thanked: true }) });
