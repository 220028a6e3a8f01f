/**
 * The workflows the benchmark's Fenceline workers serve, and the requests the harness writes for
 * them: `bench` (one pure step that concludes at once), `bench-sleep` (one pure step that
 * works for `input.ms`, stopping early when its authority is lost), and the waits part's
 * `bench-timer` (a timer until `input.dueAt`, then a no-op step) and `bench-event` (a wait for
 * event `bench.confirmed` with key `input.key`, then a no-op step). This module doubles as the
 * definitions module of the recovery benchmark's worker processes. Benchmark support only.
 */
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";
import { abortableSleep } from "@/lib/worker/abortable-sleep";
import type { WorkflowDraft } from "@/lib/engine/workflow";

const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };

/** `bench`: one pure step; `onStart` sees each attempt's input as it starts. */
export const noopWorkflow = (onStart: (input: unknown) => void = () => undefined) =>
  defineWorkflow({
    kind: "bench",
    version: 1,
    input: z.unknown(),
    steps: {
      only: {
        milestone,
        run: async (ctx) => {
          onStart(ctx.input);
          return done();
        },
      },
    },
  });

export const benchSleep = defineWorkflow({
  kind: "bench-sleep",
  version: 1,
  input: z.object({ ms: z.number().int().min(0) }),
  steps: {
    only: {
      milestone,
      run: async (ctx) => {
        await abortableSleep(ctx.input.ms, ctx.signal);
        return done({ sleptMs: ctx.input.ms });
      },
    },
  },
});

export const benchNoop = noopWorkflow();

/** The event `bench-event` waits for. */
export const BENCH_EVENT = "bench.confirmed";

export const benchTimer = defineWorkflow({ kind: "bench-timer", version: 1, input: z.object({ dueAt: z.string() }) })
  .timer("nap", { milestone, until: (ctx) => ctx.input.dueAt })
  .step("after", { dependsOn: ["nap"], milestone, run: async () => done() });

export const benchEvent = defineWorkflow({ kind: "bench-event", version: 1, input: z.object({ key: z.string() }) })
  .event("confirmed", { milestone, name: BENCH_EVENT, key: (ctx) => ctx.input.key })
  .step("after", { dependsOn: ["confirmed"], milestone, run: async () => done() });

/** The fan-out part's child: one pure step that concludes at once with its index. */
export const benchFanChild = defineWorkflow({ kind: "bench-fan-child", version: 1, input: z.object({ i: z.number().int().min(0) }) }).step("only", {
  milestone,
  run: async (ctx) => done({ i: ctx.input.i }),
});

/** The fan-out part's parent: one child step starting `input.children` children (at most the bound, 1,000), then a no-op step. */
export const benchFanOut = defineWorkflow({ kind: "bench-fan-out", version: 1, input: z.object({ children: z.number().int().min(1).max(1_000) }) })
  .children("fan", {
    milestone,
    workflow: benchFanChild,
    each: (ctx) => Array.from({ length: ctx.input.children }, (_, i) => i),
    input: (_ctx, i) => ({ i }),
    maxChildren: 1_000,
  })
  .step("after", { dependsOn: ["fan"], milestone, run: async (ctx) => done({ children: ctx.results.fan.completed }) });

/** A request of `bench` (or, with `kind`, of `bench-sleep`) as the engine writes it. */
export const benchDraft = (input: unknown, kind: "bench" | "bench-sleep" = "bench"): WorkflowDraft => ({
  kind,
  version: 1,
  input,
  requester: "bench",
  steps: [{ name: "only", adapter: "pure", stepClass: "pure" }],
});
