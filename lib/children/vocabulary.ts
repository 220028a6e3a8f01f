/** A parent step's wait for its children, the `child_wait_state` enum's labels in order: `waiting` while they run, then `ended` (settled with their results), `failed` (a child failed and the step said that fails it), or `cancelled` with its step. */
export const CHILD_WAIT_STATES = ["waiting", "ended", "failed", "cancelled"] as const;
/** Where a parent step's wait for its children stands. */
export type ChildWaitState = (typeof CHILD_WAIT_STATES)[number];
