/**
 * A request's undoing as the views, the cancel's answer and the webhooks read it: why it is being
 * undone, each undo (the step it undoes, the receipt that made it due, its state), what was not
 * undone and why, and whether undoing finished.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { run } from "@/lib/engine/db";
import type { StepState } from "@/lib/engine/vocabulary";
import type { CompensationState, CompensationView, NotUndone, UndoView } from "./types";
import * as sql from "./sql";

export type { CompensationState, CompensationView, UndoView } from "./types";

type RunRow = { workflow_id: string; cause: "cancel" | "failure"; started_at: Date; planned_at: Date | null; finished_at: Date | null; not_undone: NotUndone[]; undos: UndoView[] };

const stateOf = (row: RunRow): CompensationState =>
  row.finished_at ? "undone" : row.planned_at === null ? "waiting" : row.undos.some((undo) => undo.state === "indeterminate" || undo.state === "failed") ? "in_review" : "undoing";

/** The undoing of requests `ids`, by request; a request its kind does not undo has none. */
export async function readCompensations(db: StaffReadable, ids: readonly string[]): Promise<Map<string, CompensationView>> {
  if (ids.length === 0) return new Map();
  const rows = await run<RunRow>(db, sql.runsOf, [ids]);
  return new Map(
    rows.map((row) => [
      row.workflow_id,
      { cause: row.cause, state: stateOf(row), startedAt: row.started_at.toISOString(), finishedAt: row.finished_at?.toISOString() ?? null, undos: row.undos, notUndone: row.not_undone },
    ]),
  );
}

/** What an undo step undoes, as support and engineers read it beside the step. */
export type Undoes = { readonly step: string; readonly stepId: string; readonly receiptId: string; readonly externalReference: string | null; readonly decidedBy: string };

/** What each of `stepIds` undoes; steps that undo nothing are absent. */
export async function readUndoes(db: StaffReadable, stepIds: readonly string[]): Promise<Map<string, Undoes>> {
  if (stepIds.length === 0) return new Map();
  const rows = await run<{ step_id: string; undoes: string; undoes_step_id: string; receipt_id: string; external_reference: string | null; decided_by: string }>(db, sql.undoesOf, [stepIds]);
  return new Map(rows.map((row) => [row.step_id, { step: row.undoes, stepId: row.undoes_step_id, receiptId: row.receipt_id, externalReference: row.external_reference, decidedBy: row.decided_by }]));
}

/** The undo planned for a step: its own step, and where it stands. */
export type UndoneBy = { readonly stepId: string; readonly name: string; readonly state: StepState };

/** A step beside its undo: what it undoes (an undo step), or what undoes it (a step whose effect was undone). */
export type StepUndo = { readonly undoes: Undoes | null; readonly undoneBy: UndoneBy | null };

/** What undoes, or is undone by, step `stepId`; both null for a step untouched by any undo. */
export async function readStepUndo(db: StaffReadable, stepId: string): Promise<StepUndo> {
  const [undoes, [by]] = await Promise.all([readUndoes(db, [stepId]), run<{ step_id: string; name: string; state: StepState }>(db, sql.undoneBy, [[stepId]])]);
  return { undoes: undoes.get(stepId) ?? null, undoneBy: by ? { stepId: by.step_id, name: by.name, state: by.state } : null };
}

export async function readCompensation(db: StaffReadable, id: string): Promise<CompensationView | null> {
  return (await readCompensations(db, [id])).get(id) ?? null;
}
