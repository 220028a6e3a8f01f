/** A timer's states, the `timer_state` enum's labels in order: waiting until its time, then fired once, or cancelled with its step. */
export const TIMER_STATES = ["waiting", "fired", "cancelled"] as const;
/** Where a timer stands: `waiting` until its time, then `fired` once, or `cancelled` with its step. */
export type TimerState = (typeof TIMER_STATES)[number];
