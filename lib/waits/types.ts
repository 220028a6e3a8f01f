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
