/* What a step waits for, as the views, the API and the test kit read it. */
import type { EventTimeoutPolicy } from "@/lib/events/definition";
import type { EventWaitState } from "@/lib/events/vocabulary";
import type { TimerState } from "@/lib/timers/vocabulary";

/** A timer step's wait: when it is due (ISO 8601, database clock) and what the step asked for. */
export type TimerWait = {
  readonly room: "timer";
  readonly state: TimerState;
  readonly dueAt: string;
  /** What the step asked for: `{ afterMs }` or `{ at, timeZone? }`. */
  readonly requested: { readonly afterMs: number } | { readonly at: string; readonly timeZone?: string };
  readonly armedAt: string;
  /** When it fired or was cancelled. */
  readonly settledAt: string | null;
};

/** An event-wait step's wait: the event it waits for, until when, and what settled it. */
export type EventWait = {
  readonly room: "event";
  readonly state: EventWaitState;
  readonly name: string;
  readonly key: string;
  readonly timeoutAt: string | null;
  readonly onTimeout: EventTimeoutPolicy;
  /** The one-time URL's path (relative to Fenceline's URL) while the wait can still take it, when the step asked for one. */
  readonly url: string | null;
  readonly armedAt: string;
  readonly settledAt: string | null;
  /** The event that settled it. */
  readonly eventId: string | null;
};

/** What a step waits (or waited) for. */
export type StepWait = TimerWait | EventWait;

/**
 * What a waiting step can wait for, as engineers filter by it: `time` (a timer), `event` (an event
 * wait) or `children` (the child requests it started). Each is a wait room's `record.waitingFor`
 * (lib/waits/rooms.ts), listed here as words for the pages and the API.
 */
export const WAITING_FOR = ["time", "event", "children"] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

/** A waiting step in a list: what it waits for, since when and until when (ISO 8601, database clock). */
export type WaitSummary = {
  readonly waitingFor: WaitingFor;
  readonly since: string;
  /** A timer's due time, or an event wait's timeout; null when an event wait never times out, and for children. */
  readonly until: string | null;
  /** An event wait's event name and correlation key; null for other waits. */
  readonly event: { readonly name: string; readonly key: string } | null;
  /** A wait for children: how many of them have ended, of how many; null for other waits. */
  readonly children: { readonly ended: number; readonly total: number } | null;
};

/** An event received for an event wait's name and key: consumed (by which step, when) or still kept, or expired unconsumed. */
export type EventForKey = {
  readonly id: string;
  readonly sender: string;
  readonly receivedAt: string;
  readonly keepUntil: string;
  readonly consumedAt: string | null;
  readonly consumedByStepId: string | null;
  /** Kept past its retention with no wait taking it. */
  readonly expired: boolean;
};

/** An event wait as engineers see it: the wait and the events received for its name and key, newest first. */
export type EventWaitView = EventWait & {
  readonly events: EventForKey[];
  /** More events than `events` holds were received for its key. */
  readonly moreEvents: boolean;
};

/** What a step waits (or waited) for, with what engineers read beside it. */
export type StepWaitView = TimerWait | EventWaitView;

/**
 * One wait of a request as its page's timeline tells it: when it began, what for and until when,
 * and how it ended (ISO 8601, database clock). Each room says it in its own words (lib/waits/rooms.ts).
 */
export type WaitLine = {
  readonly stepId: string;
  /** The room that holds it: `timer`, `event`, `children`. */
  readonly room: string;
  readonly startedAt: string;
  /** What it waits for, in words: "a timer until 3 December at 09:00 UTC", "event courier.collected with key p-1". */
  readonly waitingFor: string;
  /** The latest it waits until (a timer's due time, an event wait's timeout); null when no time ends it. */
  readonly until: string | null;
  readonly endedAt: string | null;
  /** How it ended, in words ("fired", "event received", "children ended", "timed out", "cancelled"); null while it waits. */
  readonly ending: string | null;
};
