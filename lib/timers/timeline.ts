/** The timer room's lines on a request's timeline: a timer until its time (in the zone the step meant), fired or cancelled. */
import { run } from "@/lib/engine/db";
import { untilWords } from "@/lib/projection/project";
import type { WaitTimeline } from "@/lib/waits/timeline";
import type { TimerState } from "./vocabulary";

type Row = { step_id: string; state: TimerState; due_at: Date; time_zone: string | null; armed_at: Date; settled_at: Date | null };

const timersOfRequest = {
  name: "fl_timeline_timers",
  text: `SELECT t.step_id, t.state, t.due_at, t.requested->>'timeZone' AS time_zone, t.armed_at, t.settled_at
FROM timer t WHERE t.workflow_id = $1`,
};

const ENDINGS: Record<TimerState, string | null> = { waiting: null, fired: "fired", cancelled: "cancelled" };

export const timerTimeline: WaitTimeline = {
  room: "timer",
  async linesOf(db, requestId) {
    const rows = await run<Row>(db, timersOfRequest, [requestId]);
    return rows.map((row) => ({
      stepId: row.step_id,
      room: "timer",
      startedAt: row.armed_at.toISOString(),
      waitingFor: `a timer until ${untilWords({ room: "timer", dueAt: row.due_at, timeZone: row.time_zone })}`,
      until: row.due_at.toISOString(),
      endedAt: row.settled_at?.toISOString() ?? null,
      ending: ENDINGS[row.state],
    }));
  },
};
