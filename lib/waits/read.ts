/**
 * What steps wait (or waited) for, read from their rooms' records: for the step page, the request
 * page, the app's view of a request and the test kit. Read-only; each room keeps its own writes.
 */
import { run } from "@/lib/engine/db";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { waitUrlPath } from "@/lib/events/room";
import type { StepWait, TimerWait } from "./types";

type WaitRow = {
  step_id: string;
  room: "timer" | "event";
  state: string;
  due_at: Date | null;
  requested: TimerWait["requested"] | null;
  armed_at: Date;
  settled_at: Date | null;
  name: string | null;
  correlation_key: string | null;
  timeout_at: Date | null;
  on_timeout: "fail" | "continue" | null;
  url_token: string | null;
  event_id: string | null;
};

const readWaits = {
  name: "fl_read_step_waits",
  text: `
SELECT t.step_id, 'timer' AS room, t.state::text, t.due_at, t.requested, t.armed_at, t.settled_at,
       NULL AS name, NULL AS correlation_key, NULL::timestamptz AS timeout_at, NULL AS on_timeout, NULL AS url_token, NULL::uuid AS event_id
FROM timer t WHERE t.step_id = ANY($1::uuid[])
UNION ALL
SELECT e.step_id, 'event', e.state::text, NULL, NULL, e.armed_at, e.settled_at,
       e.name, e.correlation_key, e.timeout_at, e.on_timeout, e.url_token, e.event_id
FROM event_wait e WHERE e.step_id = ANY($1::uuid[])`,
};

const iso = (time: Date | null): string | null => (time === null ? null : time.toISOString());

/** The waits of `stepIds`, by step id; a step that never waited has none. */
export async function readStepWaits(db: StaffReadable, stepIds: readonly string[]): Promise<Map<string, StepWait>> {
  if (stepIds.length === 0) return new Map();
  const rows = await run<WaitRow>(db, readWaits, [stepIds]);
  return new Map(
    rows.map((row): [string, StepWait] => [
      row.step_id,
      row.room === "timer"
        ? { room: "timer", state: row.state as never, dueAt: row.due_at!.toISOString(), requested: row.requested!, armedAt: row.armed_at.toISOString(), settledAt: iso(row.settled_at) }
        : {
            room: "event",
            state: row.state as never,
            name: row.name!,
            key: row.correlation_key!,
            timeoutAt: iso(row.timeout_at),
            onTimeout: row.on_timeout!,
            // A used or ended URL is dead: only a waiting one is shown.
            url: row.url_token !== null && row.state === "waiting" ? waitUrlPath(row.url_token) : null,
            armedAt: row.armed_at.toISOString(),
            settledAt: iso(row.settled_at),
            eventId: row.event_id,
          },
    ]),
  );
}
