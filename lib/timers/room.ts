/**
 * The timer room: a step that waits until a time on the database clock. Its worker resolves what
 * the step asked for (a duration, or a time in a zone) to a request; arming records the instant,
 * and the keepers fire it once the database clock has passed it, never before, at most once. The
 * receipt's result is `{ dueAt, firedAt }`, verified by the database clock.
 */
import { z } from "zod";
import { inTransaction, run } from "@/lib/engine/db";
import { assertAllSettled, settleWaitingSteps, type WaitRoom } from "@/lib/engine/waits";
import * as sql from "./sql";
import { MAX_TIMER_MS } from "./definition";

/** What a timer step's attempt asks for: an instant, or a duration from when the step became ready. */
export const timerRequest = z.union([
  z.object({
    at: z.iso.datetime({ offset: true }),
    /** The zone the step meant a wall-clock time in, kept for the views ("3 December, 09:00 in Europe/Paris"). */
    timeZone: z.string().min(1).max(64).optional(),
  }),
  z.object({ afterMs: z.number().int().min(0).max(MAX_TIMER_MS) }),
]);
export type TimerRequest = z.infer<typeof timerRequest>;

export const timerRoom: WaitRoom = {
  name: "timer",
  record: { table: "timer", waitingFor: "time" },
  request: timerRequest,
  async arm(client, step, request) {
    const asked = request as TimerRequest;
    const [row] = await run<{ due_at: Date }>(client, sql.armTimer, [
      step.stepId,
      step.workflowId,
      "at" in asked ? asked.at : null,
      step.readyAt,
      "afterMs" in asked ? asked.afterMs : null,
      JSON.stringify(asked),
    ]);
    return { room: "timer", settled: false, dueAt: row!.due_at, detail: { dueAt: row!.due_at.toISOString() } };
  },
  async settleDue(pool, limit) {
    return inTransaction(pool, async (client) => {
      const fired = await run<{ step_id: string; due_at: Date; fired_at: Date }>(client, sql.fireDueTimers, [limit]);
      if (fired.length === 0) return 0;
      const settled = await settleWaitingSteps(
        client,
        fired.map((timer) => ({
          stepId: timer.step_id,
          result: { dueAt: timer.due_at.toISOString(), firedAt: timer.fired_at.toISOString() },
          verification: "database_clock",
          externalReference: null,
        })),
      );
      assertAllSettled("timer", fired.map((timer) => timer.step_id), settled);
      return settled.size;
    });
  },
  async nextDueInMs(db) {
    const [row] = await run<{ in_ms: number | null }>(db, sql.nextTimerDue, []);
    return row?.in_ms ?? null;
  },
};
