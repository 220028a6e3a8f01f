/**
 * What the fault harness's worker processes serve: `scenario`, one step delivering to the
 * synthetic destination through the contract its request names (`input.contract`), on the
 * harness's short-lease step class. Tests of the runtime against the destination service use the
 * same workflow on a class of their own. This module is the worker processes' definitions module
 * (FENCELINE_DEFINITIONS), so it reads the destination's address from FENCELINE_DESTINATION_URL.
 */
import { z } from "zod";
import { chooseAdapter, defineWorkflow, effect } from "fenceline";
import { demoAdapters } from "@/lib/demo/adapters";
import { CONTRACTS } from "./types";

/** The harness's step class: leases short enough that a cell settles in seconds. */
export const SCENARIO_CLASS = "scenario";

export const scenarioInput = z.object({ contract: z.enum(CONTRACTS), payload: z.unknown().optional() }).loose();

/** `scenario` on the destination at `destinationUrl`, with its one step (`deliver`) on `stepClass`. */
export function scenarioWorkflow(destinationUrl: string, stepClass: string = SCENARIO_CLASS, kind = "scenario") {
  const adapters = demoAdapters(destinationUrl);
  return defineWorkflow({
    kind,
    version: 1,
    input: scenarioInput,
    steps: {
      deliver: {
        adapter: chooseAdapter("contract", adapters),
        class: stepClass,
        milestone: { upcoming: "Delivery", current: "Delivering", done: "Delivered", service: "the delivery service" },
        // A fenced destination guards a resource per step: the term is per step.
        run: async (ctx) => effect(await ctx.invoke({ payload: ctx.input.payload ?? null, resource: ctx.stepId })),
      },
    },
  });
}

export const scenario = scenarioWorkflow(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100");
