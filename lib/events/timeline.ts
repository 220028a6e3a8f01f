/** The event room's lines on a request's timeline: an event by name and key, until its timeout; received, timed out or cancelled. */
import { run } from "@/lib/engine/db";
import { untilWords } from "@/lib/projection/project";
import type { WaitTimeline } from "@/lib/waits/timeline";
import type { EventWaitState } from "./vocabulary";

type Row = { step_id: string; state: EventWaitState; name: string; correlation_key: string; timeout_at: Date | null; on_timeout: "fail" | "continue"; armed_at: Date; settled_at: Date | null };

const eventWaitsOfRequest = {
  name: "fl_timeline_event_waits",
  text: `SELECT e.step_id, e.state, e.name, e.correlation_key, e.timeout_at, e.on_timeout, e.armed_at, e.settled_at
FROM event_wait e WHERE e.workflow_id = $1`,
};

function ending(row: Row): string | null {
  switch (row.state) {
    case "waiting":
      return null;
    case "received":
      return "event received";
    case "timed_out":
      return row.on_timeout === "continue" ? "timed out (the step went on without it)" : "timed out (the request failed)";
    case "cancelled":
      return "cancelled";
  }
}

export const eventTimeline: WaitTimeline = {
  room: "event",
  async linesOf(db, requestId) {
    const rows = await run<Row>(db, eventWaitsOfRequest, [requestId]);
    return rows.map((row) => ({
      stepId: row.step_id,
      room: "event",
      startedAt: row.armed_at.toISOString(),
      waitingFor: `event ${row.name} with key ${row.correlation_key}${row.timeout_at ? `, until ${untilWords({ room: "timer", dueAt: row.timeout_at, timeZone: null })}` : ""}`,
      until: row.timeout_at?.toISOString() ?? null,
      endedAt: row.settled_at?.toISOString() ?? null,
      ending: ending(row),
    }));
  },
};
