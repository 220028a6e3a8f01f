/**
 * Reads a workflow's durable state and projects it for its end user. The tracking token is the
 * only key an end user has; an unknown token and a malformed one are the same "not found".
 */
import { undoneStepOf, undoStepName } from "@/lib/compensation/definition";
import type { RegisteredStep } from "@/lib/definitions/registration";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { run, type Queryable } from "@/lib/engine/db";
import { projectForEndUser } from "./project";
import * as sql from "./sql";
import type { ProjectionSnapshot, StepState, TrackingView, WorkflowStatus } from "./types";

type SnapshotRow = {
  id: string;
  kind: string;
  version: number;
  input: unknown;
  definition_title: string | null;
  /** Null when the request's kind and version were never registered (made by hand, in tests). */
  definition_steps: RegisteredStep[] | null;
  status: WorkflowStatus;
  created_at: Date;
  updated_at: Date;
  deadline_passed: boolean;
  customer_reason: string | null;
  steps: {
    name: string;
    position: number;
    state: StepState;
    externalEffect: boolean;
    attemptsStarted: number;
    interrupted: boolean;
    underReview: boolean;
    longerThanUsual: boolean;
    wait: { room: "timer"; dueAt: string; timeZone: string | null } | { room: "event" } | { room: "children"; ended: number; total: number } | null;
    updatedAt: string;
    completedAt: string | null;
  }[];
};

/** Tracking tokens are 24 random bytes in base64url: exactly 32 characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token);

function toSnapshot(row: SnapshotRow): ProjectionSnapshot {
  const milestones = new Map<string, RegisteredStep["milestone"]>((row.definition_steps ?? []).map((step) => [step.name, step.milestone]));
  // An undo step (lib/compensation) speaks the undo's words: "Refunding your payment", "Payment refunded".
  for (const step of row.definition_steps ?? []) {
    if (step.compensate) milestones.set(undoStepName(step.name), { upcoming: step.compensate.milestone.current, current: step.compensate.milestone.current, done: step.compensate.milestone.done });
  }
  return {
    workflowId: row.id,
    kind: row.kind,
    input: row.input,
    title: row.definition_title,
    status: row.status,
    customerReason: row.customer_reason,
    deadlinePassed: row.deadline_passed,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    steps: row.steps.map((step) => ({
      name: step.name,
      position: step.position,
      state: step.state,
      externalEffect: step.externalEffect,
      milestone: milestones.get(step.name) ?? null,
      attemptsStarted: step.attemptsStarted,
      interrupted: step.interrupted,
      underReview: step.underReview,
      longerThanUsual: step.longerThanUsual,
      wait: step.wait === null ? null : step.wait.room === "timer" ? { ...step.wait, dueAt: new Date(step.wait.dueAt) } : step.wait,
      undoes: undoneStepOf(step.name) !== null,
      updatedAt: new Date(step.updatedAt),
      completedAt: step.completedAt === null ? null : new Date(step.completedAt),
    })),
  };
}

/** The end user's view of the request behind `token`, or null when there is none. */
export async function trackingViewByToken(db: Queryable, token: string): Promise<TrackingView | null> {
  if (!isWellFormedToken(token)) return null;
  const [row] = await run<SnapshotRow>(db, sql.snapshotByToken, [token]);
  return row ? projectForEndUser(toSnapshot(row)) : null;
}

/** What the customer of workflow `workflowId` currently sees (for staff pages). */
export async function trackingViewByWorkflowId(db: StaffReadable, workflowId: string): Promise<TrackingView | null> {
  const [row] = await run<SnapshotRow>(db, sql.snapshotByWorkflowId, [workflowId]);
  return row ? projectForEndUser(toSnapshot(row)) : null;
}
