/** An event wait's states, the `event_wait_state` enum's labels in order: waiting, then received, timed out, or cancelled with its step. */
export const EVENT_WAIT_STATES = ["waiting", "received", "timed_out", "cancelled"] as const;
export type EventWaitState = (typeof EVENT_WAIT_STATES)[number];
