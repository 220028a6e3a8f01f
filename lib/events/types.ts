/* The shapes `POST /api/events` and `fenceline/client` share. */

/** The waiting step an event settled. */
export type Consumer = { readonly requestId: string; readonly step: string };

/** An accepted event, and what it did. */
export type SentEvent = {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  /** ISO 8601, database clock. */
  readonly receivedAt: string;
  /** True when the idempotency key named an event sent before: this is that event. */
  readonly duplicate: boolean;
  /** The waiting step it settled, or null while it is kept for a wait that has not begun. */
  readonly consumedBy: Consumer | null;
  /** Until when it is kept for a wait that has not begun (ISO 8601). */
  readonly keepUntil: string;
};
