/** An event wait's states, the `event_wait_state` enum's labels in order: waiting, then received, timed out, or cancelled with its step. */
export const EVENT_WAIT_STATES = ["waiting", "received", "timed_out", "cancelled"] as const;
/** Where an event wait stands: `waiting`, then `received` (an event settled it), `timed_out`, or `cancelled` with its step. */
export type EventWaitState = (typeof EVENT_WAIT_STATES)[number];
