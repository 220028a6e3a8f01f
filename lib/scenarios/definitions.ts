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

/** One set of adapters per destination: a worker serving both workflows must define each adapter once. */
const adaptersByUrl = new Map<string, ReturnType<typeof demoAdapters>>();
const adaptersFor = (destinationUrl: string) => {
  const known = adaptersByUrl.get(destinationUrl) ?? demoAdapters(destinationUrl);
  adaptersByUrl.set(destinationUrl, known);
  return known;
};

export const scenarioInput = z.object({ contract: z.enum(CONTRACTS), payload: z.unknown().optional() }).loose();

/** `scenario` on the destination at `destinationUrl`, with its one step (`deliver`) on `stepClass`. */
export function scenarioWorkflow(destinationUrl: string, stepClass: string = SCENARIO_CLASS, kind = "scenario") {
  const adapters = adaptersFor(destinationUrl);
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

/** The event the waits cell sends, correlated by `input.key`. */
export const SCENARIO_SIGNAL = "scenario.signal";

export const scenarioWaitsInput = scenarioInput.extend({
  key: z.string().min(1).max(200),
  sleepMs: z.number().int().min(0).max(60_000),
  timeoutMs: z.number().int().min(0).max(60_000),
});

/**
 * `scenario-waits`, for the waits cell: a timer (`sleepMs` after the request is created), then a
 * wait for `scenario.signal` with the request's key (`timeoutMs`, and a timeout lets the request
 * go on), then one delivery to the destination through the request's contract.
 */
export function scenarioWaitsWorkflow(destinationUrl: string, stepClass: string = SCENARIO_CLASS) {
  const adapters = adaptersFor(destinationUrl);
  return defineWorkflow({ kind: "scenario-waits", version: 1, input: scenarioWaitsInput })
    .timer("sleep", { milestone: { upcoming: "Pause", current: "Pausing until {until}", done: "Paused" }, afterMs: (ctx) => ctx.input.sleepMs })
    .event("signal", {
      dependsOn: ["sleep"],
      milestone: { upcoming: "Signal", current: "Waiting for the signal", done: "Signalled" },
      name: SCENARIO_SIGNAL,
      key: (ctx) => ctx.input.key,
      payload: z.object({ n: z.number().int() }),
      timeoutMs: (ctx) => ctx.input.timeoutMs,
      onTimeout: "continue",
    })
    .step("deliver", {
      dependsOn: ["signal"],
      adapter: chooseAdapter("contract", adapters),
      class: stepClass,
      milestone: { upcoming: "Delivery", current: "Delivering", done: "Delivered", service: "the delivery service" },
      run: async (ctx) => effect(await ctx.invoke({ payload: { signalled: ctx.results.signal.received }, resource: ctx.stepId })),
    });
}

export const scenarioWaits = scenarioWaitsWorkflow(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100");

/** The event the undo cell's requests wait for and never get: they are cancelled while they wait. */
export const SCENARIO_HOLD = "scenario.hold";

export const scenarioUndoInput = z.object({ key: z.string().min(1).max(200) });

/**
 * `scenario-undo-<contract>`, for the undo cell (lib/compensation): one delivery to the contract's
 * destination that declares its undo (a second delivery there, under the undo's own identity and,
 * at a fenced destination, its own resource), then a wait that only a cancel ends. One kind per
 * contract: an undo names one adapter, not one the input chooses.
 */
export function scenarioUndoWorkflows(destinationUrl: string, stepClass: string = SCENARIO_CLASS) {
  const adapters = adaptersFor(destinationUrl);
  return CONTRACTS.map((contract) =>
    defineWorkflow({ kind: `scenario-undo-${contract}`, version: 1, input: scenarioUndoInput, compensateOn: "cancel" })
      .step("deliver", {
        adapter: adapters[contract],
        class: stepClass,
        milestone: { upcoming: "Delivery", current: "Delivering", done: "Delivered", service: "the delivery service" },
        run: async (ctx) => effect(await ctx.invoke({ payload: { key: ctx.input.key }, resource: ctx.stepId })),
        compensate: {
          adapter: adapters[contract],
          class: stepClass,
          payload: ({ input }) => ({ payload: { undo: input.key }, resource: `undo-${input.key}` }),
          milestone: { current: "Taking the delivery back", done: "Delivery taken back" },
        },
      })
      .event("hold", {
        dependsOn: ["deliver"],
        milestone: { upcoming: "Hold", current: "Holding", done: "Held" },
        name: SCENARIO_HOLD,
        key: (ctx) => ctx.input.key,
        timeoutMs: 60_000,
        onTimeout: "continue",
      }),
  );
}

export const scenarioUndo = scenarioUndoWorkflows(process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100");
