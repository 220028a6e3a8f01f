/**
 * Undoing a request, decided from receipts. A request of a kind that declares compensations, when
 * it is cancelled or fails (as its workflow says), is being undone: `cancelling` or `failing`.
 *
 *   active ──cancel / failure──▶ cancelling | failing ──plan──▶ (undos run, last first) ──▶ cancelled | failed
 *                                  (a step in flight or under review: the plan waits)      (an undo unknown: review)
 *
 * The plan is made once, when no step of the request is in flight or under review: each effect is
 * then known. A step with a receipt of an effect is undone by a step of its own (its declared
 * adapter and contract), in reverse order of receipts; a step that ended without one is not (known
 * absent, or a person said so in review, recorded with who decided). The undos are steps like any
 * other: leases, fencing terms, checkpoints, receipts, recovery by contract, review. The last
 * undo's receipt ends the request (trigger compensation_step_done); an undo that cannot finish
 * leaves it in review, never `cancelled` as if all were undone.
 */
import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import type { DueWork } from "@/lib/engine/waits";
import type { StepState, VerificationMethod } from "@/lib/engine/vocabulary";
import { undoStepName, type RegisteredCompensation } from "./definition";
import * as sql from "./sql";
import type { NotUndone } from "./types";
import { UNDO_POSITION_BASE } from "./steps";

export type { NotUndone } from "./types";

type RunRow = { workflow_id: string; cause: "cancel" | "failure"; kind: string; version: number; input_digest: string; priority: number; concurrency_key: string | null };
type DeclaredRow = {
  workflow_id: string;
  step_id: string;
  name: string;
  state: StepState;
  position: number;
  fair_position: string;
  compensate: RegisteredCompensation;
  receipt_id: string | null;
  reviewed_by: string | null;
};
type ReceiptRow = { id: string; external_reference: string | null; verification_method: VerificationMethod; created_at: Date };


/**
 * Plans the runs that are ready (of `workflowIds`, any when null; at most `limit`), in one
 * transaction; returns the requests planned. A run with nothing to undo finishes at once.
 */
export async function planCompensations(pool: Pool, workflowIds: readonly string[] | null, limit = 100): Promise<string[]> {
  return inTransaction(pool, async (client) => {
    const runs = await run<RunRow>(client, sql.lockRunsToPlan, [workflowIds, limit]);
    if (runs.length === 0) return [];
    const ids = runs.map((r) => r.workflow_id);
    const declared = await run<DeclaredRow>(client, sql.declaredSteps, [ids]);
    const receiptIds = declared.flatMap((d) => (d.receipt_id ? [d.receipt_id] : []));
    const receipts = new Map((receiptIds.length ? await run<ReceiptRow>(client, sql.receiptsById, [receiptIds]) : []).map((r) => [r.id, r]));

    const undos: { id: string; run: RunRow; step: DeclaredRow; receipt: ReceiptRow; rank: number; previous: string | null }[] = [];
    const notUndone = new Map<string, NotUndone[]>(ids.map((id) => [id, []]));
    for (const r of runs) {
      const mine = declared.filter((d) => d.workflow_id === r.workflow_id && (d.compensate.on === r.cause || d.compensate.on === "both"));
      const effects: { step: DeclaredRow; receipt: ReceiptRow }[] = [];
      for (const step of mine) {
        const receipt = step.receipt_id ? receipts.get(step.receipt_id) : undefined;
        if (step.state === "completed" && receipt && receipt.verification_method !== "no_action_needed") effects.push({ step, receipt });
        else notUndone.get(r.workflow_id)!.push({ step: step.name, why: whyNotUndone(step, receipt), decidedBy: step.reviewed_by ? `review: ${step.reviewed_by}` : "receipts" });
      }
      // The last receipt is undone first.
      effects.sort((a, b) => b.receipt.created_at.getTime() - a.receipt.created_at.getTime() || (a.receipt.id < b.receipt.id ? 1 : -1));
      let previous: string | null = null;
      effects.forEach(({ step, receipt }, index) => {
        const id = randomUUID();
        undos.push({ id, run: r, step, receipt, rank: index + 1, previous });
        previous = id;
      });
    }
    const edges = undos.flatMap((u) => [[u.id, u.step.step_id] as const, ...(u.previous ? [[u.id, u.previous] as const] : [])]);
    await run(client, sql.writePlans, [
      undos.map((u) => u.id),
      undos.map((u) => u.run.workflow_id),
      undos.map((u) => undoStepName(u.step.name)),
      undos.map((u) => UNDO_POSITION_BASE + u.step.position),
      undos.map((u) => u.step.compensate.adapter.name),
      undos.map((u) => u.step.compensate.adapter.version),
      undos.map((u) => u.step.compensate.class),
      undos.map((u) => u.run.input_digest),
      undos.map((u) => (u.previous ? 1 : 0)),
      undos.map((u) => u.step.compensate.attemptBudget),
      undos.map((u) => u.run.priority),
      undos.map((u) => u.step.fair_position),
      undos.map((u) => u.step.step_id),
      edges.map(([step]) => step),
      edges.map(([, dependsOn]) => dependsOn),
      undos.map((u) => u.receipt.id),
      undos.map((u) => u.receipt.external_reference),
      undos.map((u) => u.rank),
      undos.map((u) => (u.step.reviewed_by ? `review: ${u.step.reviewed_by}` : `receipt (${u.receipt.verification_method.replaceAll("_", " ")})`)),
      ids,
      ids.map((id) => JSON.stringify(notUndone.get(id))),
    ]);
    await run(client, sql.finishRuns, [ids]);
    return ids;
  });
}

function whyNotUndone(step: DeclaredRow, receipt: ReceiptRow | undefined): string {
  if (receipt?.verification_method === "no_action_needed" || step.state === "completed_without_effect") return "it needed no action: nothing to undo";
  if (step.state === "blocked" || step.state === "ready") return "it never ran: nothing to undo";
  if (step.reviewed_by) return "a person found its effect absent or gave it up in review: not undone";
  return `it ended ${step.state.replaceAll("_", " ")} with no effect: nothing to undo`;
}

/** The keepers' share of the room: plans each run once its request has nothing in flight or under review. */
export const compensationWork: DueWork = {
  name: "compensation",
  async settleDue(pool, limit) {
    return (await planCompensations(pool, null, limit)).length;
  },
  async nextDueInMs(db: Queryable) {
    const [row] = await run<{ in_ms: number }>(db, sql.nextRunToPlan, []);
    return row ? row.in_ms : null;
  },
};
