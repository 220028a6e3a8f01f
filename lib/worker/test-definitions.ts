/**
 * The definitions module of worker processes under test (lib/worker/test-process.ts): small
 * pure workflows on the `fast` step class (a 1.5 s lease), which a test creates with
 * `createFastClass` before it starts a worker. Test support only.
 */
import type { Pool } from "pg";
import { z } from "zod";
import { defineWorkflow, done } from "fenceline";
import { abortableSleep } from "./abortable-sleep";

export const FAST_CLASS = { name: "fast", leaseTtlMs: 1_500, renewEveryMs: 500, attemptDeadlineMs: 60_000, graceMs: 500 } as const;

export async function createFastClass(pool: Pool): Promise<void> {
  await pool.query(
    `INSERT INTO step_class (name, lease_ttl_ms, renew_every_ms, attempt_deadline_ms, grace_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING`,
    [FAST_CLASS.name, FAST_CLASS.leaseTtlMs, FAST_CLASS.renewEveryMs, FAST_CLASS.attemptDeadlineMs, FAST_CLASS.graceMs],
  );
}

const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };
const input = z.object({ ms: z.number().int().min(0).default(0) }).loose();

/** One step, `work`, that works for `input.ms`. */
export const sleepOnce = defineWorkflow({
  kind: "process-sleep",
  version: 1,
  input,
  steps: {
    work: {
      class: FAST_CLASS.name,
      milestone,
      run: async (ctx) => {
        await abortableSleep(ctx.input.ms, ctx.signal);
        return done({ sleptMs: ctx.input.ms });
      },
    },
  },
});

/** Two steps: `first` works for `input.ms`, then `second` concludes at once. */
export const sleepThenDone = defineWorkflow({
  kind: "process-two",
  version: 1,
  input,
  steps: {
    first: {
      class: FAST_CLASS.name,
      milestone,
      run: async (ctx) => {
        await abortableSleep(ctx.input.ms, ctx.signal);
        return done({ sleptMs: ctx.input.ms });
      },
    },
    second: { class: FAST_CLASS.name, dependsOn: ["first"], milestone, run: async () => done() },
  },
});
