/** The durable facts the end-user projection is built from, and what it produces. */
import type { Milestone as MilestoneWords } from "@/lib/definitions/workflow";

import type { StepState, WorkflowStatus } from "@/lib/engine/vocabulary";

export type { StepState, WorkflowStatus } from "@/lib/engine/vocabulary";

/** What a waiting step waits for, as the end user is told: a timer's time (in the zone it was meant in), or an event. */
export type SnapshotWait =
  | { readonly room: "timer"; readonly dueAt: Date; readonly timeZone: string | null }
  | { readonly room: "event" }
  /** A step waiting for the child requests it started: how many have ended, of how many. */
  | { readonly room: "children"; readonly ended: number; readonly total: number };

export type StepSnapshot = {
  readonly name: string;
  readonly position: number;
  readonly state: StepState;
  /** From the adapter's contract: the step calls something outside Fenceline. */
  readonly externalEffect: boolean;
  /** The step's words from its workflow definition; null for a request made without one. */
  readonly milestone: MilestoneWords | null;
  readonly attemptsStarted: number;
  /** An earlier try of this step ended without a conclusion (authority lost, or it failed). */
  readonly interrupted: boolean;
  /** A review case is open for this step. */
  readonly underReview: boolean;
  /** It may run and has waited to settle longer than the same step of its kind usually does (lib/projection/sql.ts). */
  readonly longerThanUsual: boolean;
  /** While the step waits: for what. Null otherwise. */
  readonly wait: SnapshotWait | null;
  /** The step undoes another's effect (lib/compensation): its words are the undo's. */
  readonly undoes?: boolean;
  readonly updatedAt: Date;
  readonly completedAt: Date | null;
};

export type ProjectionSnapshot = {
  readonly workflowId: string;
  readonly kind: string;
  readonly input: unknown;
  /** The definition's title template (`Order {orderId}`), or null. */
  readonly title: string | null;
  readonly status: WorkflowStatus;
  /** A reason written for the customer by a person (support's abandon), or null. */
  readonly customerReason: string | null;
  readonly deadlinePassed: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly steps: readonly StepSnapshot[];
};

export type TrackingHeadline = "preparing" | "scheduled" | "waiting" | "recovering" | "needs_review" | "completed" | "cancelled" | "not_completed" | "cancelling" | "reversing";
export type TrackingTone = "neutral" | "attention" | "ok" | "stopped";
export type MilestoneStatus = "done" | "skipped" | "current" | "upcoming" | "attention" | "stopped";

/** One step as the end user sees it: its words for the moment and where it stands. */
export type Milestone = {
  readonly key: string;
  readonly label: string;
  readonly status: MilestoneStatus;
  /** When it was reached (ISO 8601), for done milestones. */
  readonly at: string | null;
};

/** The end user's view: no engine field, no engine word. */
export type TrackingView = {
  readonly reference: string;
  readonly title: string;
  readonly headline: { readonly state: TrackingHeadline; readonly label: string; readonly tone: TrackingTone };
  readonly happening: string;
  readonly next: string;
  readonly reason: string | null;
  /** The request is taking longer than requests of its kind usually do; `next` says what happens. */
  readonly longerThanUsual: boolean;
  readonly milestones: Milestone[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly terminal: boolean;
};
