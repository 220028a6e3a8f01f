/**
 * What a schedule looks like to its readers (the API, the client, the page): types only, with no
 * server code behind them, so `fenceline/client`'s declarations need nothing but these.
 */
import type { ScheduleSpec } from "./definition";

/** One due time of a schedule that a keeper reached, and what it did: started a request, skipped, queued or failed (with the reason). */
export type ScheduleFiringView = {
  /** The due time, ISO 8601. */
  readonly dueAt: string;
  readonly state: "started" | "skipped" | "queued" | "failed";
  readonly requestId: string | null;
  /** The request's status now (`active`, `completed`, …), or null when it started none (or was archived). */
  readonly requestStatus: string | null;
  /** Why it was skipped, queued or failed. */
  readonly reason: string | null;
  /** When the keeper recorded it, on the database clock. */
  readonly firedAt: string;
  /** How late the firing was on the database clock, in milliseconds. */
  readonly latenessMs: number;
};

/** A schedule as Fenceline keeps it: its definition, whose it is, its state, its next due times and its last firings. */
export type ScheduleView = Omit<ScheduleSpec, "input"> & {
  readonly id: string;
  readonly input: unknown;
  readonly owner: string;
  readonly state: "active" | "paused";
  readonly nextDueAt: string | null;
  /** The next due times (the first is `nextDueAt`); none while paused. */
  readonly upcoming: string[];
  readonly lastFirings: ScheduleFiringView[];
  /** Due times missed past the catch-up policy (downtime). */
  readonly missed: number;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
};

