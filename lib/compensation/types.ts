/**
 * A request's undoing as its readers see it: the cancel's answer, the client, the views and the
 * webhooks. Types only, so the package's doors can name them without the server code.
 */
import type { StepState } from "@/lib/engine/vocabulary";

/** An effect the plan did not undo, and why. */
export type NotUndone = { readonly step: string; readonly why: string; readonly decidedBy: string };

/** One undo: the step that undoes `undoes`, in reverse order of receipts (`rank` 1 runs first). */
export type UndoView = {
  readonly stepId: string;
  readonly name: string;
  readonly undoes: string;
  readonly undoesStepId: string;
  readonly state: StepState;
  readonly stateReason: string | null;
  readonly rank: number;
  readonly receiptId: string;
  readonly externalReference: string | null;
  readonly decidedBy: string;
};

/**
 * `waiting`: a step of the request is in flight or under review, so what to undo is not known yet;
 * `undoing`: the undos run; `undone`: every undo has its receipt; `in_review`: an undo's outcome
 * needs a person.
 */
export type CompensationState = "waiting" | "undoing" | "undone" | "in_review";

/**
 * How a request's effects are being undone: why (`cause`), where it stands (`state`), each undo in
 * the order it runs (`undos`, `rank` 1 first: reverse order of receipts), and each step that
 * declared an undo but had no effect to undo (`notUndone`, with why and who decided). The cancel's
 * answer carries it (`compensation`).
 */
export type CompensationView = {
  readonly cause: "cancel" | "failure";
  readonly state: CompensationState;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly undos: readonly UndoView[];
  readonly notUndone: readonly NotUndone[];
};
