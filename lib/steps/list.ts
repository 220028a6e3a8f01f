/** The engineer's list of steps, most recently changed first, keyset-paginated on (updated_at, id). */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { ListStepsQuery, StepSummary, StepPage } from "@/lib/api/contract/engineer/steps";
import { encodeCursor } from "@/lib/api/cursor";
import { run } from "@/lib/engine/db";
import { readWaitSummaries } from "@/lib/waits/read";
import * as sql from "./sql";

type Row = {
  id: string;
  workflow_id: string;
  workflow_kind: string;
  name: string;
  adapter: string;
  operation: string;
  step_class: string;
  state: StepSummary["state"];
  state_reason: string | null;
  fencing_term: string;
  attempts_started: number;
  attempt_budget: number;
  updated_at: Date;
  updated_key: string;
  lease_term: string | null;
  lease_epoch: string | null;
  lease_owner: string | null;
  lease_leased_at: Date | null;
  lease_expires_at: Date | null;
  open_review: boolean;
  fencing_rejections: number;
};

export async function listSteps(pool: StaffReadable, query: ListStepsQuery): Promise<StepPage> {
  const [cursorAt, cursorId] = query.cursor ?? [null, null];
  const rows = await run<Row>(pool, sql.listSteps, [
    query.state ?? null,
    query.adapter ?? null,
    query.workflow ?? null,
    query.openReview ?? null,
    query.hasRejection ?? null,
    query.hasLateObservation ?? null,
    query.leaseEvent ?? null,
    query.recovery ?? null,
    query.from ?? null,
    query.to ?? null,
    cursorAt,
    cursorId,
    query.limit + 1,
    query.enteredUnknown ?? null,
    query.duplicateReference ?? null,
    query.capability ?? null,
    query.receipt ?? null,
    query.waitingFor ?? null,
  ]);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const waits = await readWaitSummaries(pool, page.filter((row) => row.state === "waiting").map((row) => row.id));
  return {
    items: page.map((row) => ({
      id: row.id,
      workflowId: row.workflow_id,
      workflowKind: row.workflow_kind,
      name: row.name,
      adapter: row.adapter,
      operation: row.operation,
      stepClass: row.step_class,
      state: row.state,
      stateReason: row.state_reason,
      fencingTerm: Number(row.fencing_term),
      attemptsStarted: row.attempts_started,
      attemptBudget: row.attempt_budget,
      updatedAt: row.updated_at.toISOString(),
      currentLease:
        row.lease_term !== null && row.lease_owner !== null && row.lease_leased_at && row.lease_expires_at
          ? {
              fencingTerm: Number(row.lease_term),
              epoch: Number(row.lease_epoch),
              ownerSessionId: row.lease_owner,
              leasedAt: row.lease_leased_at.toISOString(),
              expiresAt: row.lease_expires_at.toISOString(),
            }
          : null,
      openReview: row.open_review,
      fencingRejections: row.fencing_rejections,
      wait: waits.get(row.id) ?? null,
    })),
    nextCursor: rows.length > query.limit && last ? encodeCursor([last.updated_key, last.id]) : null,
  };
}
