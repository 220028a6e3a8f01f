/**
 * What steps wait (or waited) for, read from their rooms' records: for the step page, the request
 * page, the app's view of a request and the test kit; and, for the lists, what waiting steps wait
 * for now (children too: their tree is read apart, lib/children/read.ts). Read-only; each room
 * keeps its own writes.
 */
import { run } from "@/lib/engine/db";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { waitUrlPath } from "@/lib/events/room";
import { waitTimelines } from "./rooms";
import * as waitsSql from "./sql";
import type { EventForKey, StepWait, StepWaitView, TimerWait, WaitLine, WaitSummary } from "./types";

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

/** At most this many events are shown beside an event wait, newest first. */
export const EVENTS_SHOWN_PER_WAIT = 50;

type EventRow = {
  id: string;
  sender: string;
  received_at: Date;
  keep_until: Date;
  consumed_at: Date | null;
  consumed_by_step_id: string | null;
  expired: boolean;
};

/** The wait of `stepId` as engineers see it (an event wait with the events received for its name and key); null if it never waited. */
export async function readStepWaitView(db: StaffReadable, stepId: string): Promise<StepWaitView | null> {
  const wait = (await readStepWaits(db, [stepId])).get(stepId);
  if (!wait || wait.room === "timer") return wait ?? null;
  const rows = await run<EventRow>(db, waitsSql.eventsForKey, [wait.name, wait.key, EVENTS_SHOWN_PER_WAIT + 1]);
  const events = rows.slice(0, EVENTS_SHOWN_PER_WAIT).map(
    (row): EventForKey => ({
      id: row.id,
      sender: row.sender,
      receivedAt: row.received_at.toISOString(),
      keepUntil: row.keep_until.toISOString(),
      consumedAt: iso(row.consumed_at),
      consumedByStepId: row.consumed_by_step_id,
      expired: row.expired,
    }),
  );
  return { ...wait, events, moreEvents: rows.length > EVENTS_SHOWN_PER_WAIT };
}

/** The waits for children of steps $1 that still wait: since when, and how many children have ended of how many. */
const readChildWaitsWaiting = {
  name: "fl_read_child_waits_waiting",
  text: `SELECT c.step_id, c.armed_at, c.children_ended, c.children_total FROM child_wait c WHERE c.step_id = ANY($1::uuid[]) AND c.state = 'waiting'`,
};

/** What each of `stepIds` waits for now, by step id; a step that does not wait now has none. */
export async function readWaitSummaries(db: StaffReadable, stepIds: readonly string[]): Promise<Map<string, WaitSummary>> {
  if (stepIds.length === 0) return new Map();
  const [waits, childWaits] = await Promise.all([
    readStepWaits(db, stepIds),
    run<{ step_id: string; armed_at: Date; children_ended: number; children_total: number }>(db, readChildWaitsWaiting, [stepIds]),
  ]);
  const summaries = new Map<string, WaitSummary>();
  for (const [stepId, wait] of waits) {
    if (wait.state !== "waiting") continue;
    summaries.set(
      stepId,
      wait.room === "timer"
        ? { waitingFor: "time", since: wait.armedAt, until: wait.dueAt, event: null, children: null }
        : { waitingFor: "event", since: wait.armedAt, until: wait.timeoutAt, event: { name: wait.name, key: wait.key }, children: null },
    );
  }
  for (const wait of childWaits) {
    summaries.set(wait.step_id, {
      waitingFor: "children",
      since: wait.armed_at.toISOString(),
      until: null,
      event: null,
      children: { ended: wait.children_ended, total: wait.children_total },
    });
  }
  return summaries;
}

/** Every wait of request `requestId`, from every room, in the order they began (then by step). */
export async function readWaitLines(db: StaffReadable, requestId: string): Promise<WaitLine[]> {
  const lines = (await Promise.all(waitTimelines.map((timeline) => timeline.linesOf(db, requestId)))).flat();
  return lines.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.stepId.localeCompare(b.stepId));
}
