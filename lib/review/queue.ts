/**
 * The review queue: cases by review-by time (overdue first), filtered by status, destination,
 * text, holder (mine, unassigned) and overdue, with keyset pagination on (review_by, id). A
 * customer's reference (FL-XXXX-XXXX) finds their request.
 */
import type { ReviewCaseSummary, ReviewQueueQuery } from "@/lib/api/contract/support";
import { encodeCursor, type Page } from "@/lib/api/cursor";
import type { StoredContract } from "@/lib/engine/contract";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { run } from "@/lib/engine/db";
import type { ReviewStatus } from "@/lib/engine/vocabulary";
import { referenceOf } from "@/lib/projection/project";
import * as sql from "./sql";
import { readUndoes, type Undoes } from "@/lib/compensation/read";

export type CaseRow = {
  id: string;
  status: ReviewStatus;
  version: number;
  reason: string;
  opened_at: Date;
  review_by: Date;
  overdue: boolean;
  assignee: string | null;
  assigned_at: Date | null;
  workflow_id: string;
  resolution: ReviewCaseSummary["resolution"];
  resolved_by: string | null;
  resolved_at: Date | null;
  step_id: string;
  step_name: string;
  adapter: string;
  adapter_version: string;
  operation: string;
  /** Null when no contract is registered for the step's adapter. */
  contract: StoredContract | null;
  attempt_count: number;
  late_observation_count: number;
};

const REFERENCE_PATTERN = /^FL-?([0-9A-F]{4})-?([0-9A-F]{4})$/i;

/** A reason filter as an ILIKE pattern that matches the text literally. */
const containing = (text: string): string => `%${text.replaceAll(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function summaryOf(row: CaseRow, undoes: ReadonlyMap<string, Undoes> = new Map()): ReviewCaseSummary {
  const { contract } = row;
  return {
    id: row.id,
    status: row.status,
    version: row.version,
    reason: row.reason,
    openedAt: row.opened_at.toISOString(),
    reviewBy: row.review_by.toISOString(),
    overdue: row.overdue,
    assignee: row.assignee,
    assignedAt: row.assigned_at?.toISOString() ?? null,
    workflowId: row.workflow_id,
    reference: referenceOf(row.workflow_id),
    stepId: row.step_id,
    stepName: row.step_name,
    adapter: row.adapter,
    operation: row.operation,
    attemptCount: row.attempt_count,
    lateObservationCount: row.late_observation_count,
    statusQuery: contract?.statusQuery ?? false,
    idempotencyKeys: contract?.idempotencyKeys ?? false,
    resolution: row.resolution,
    resolvedBy: row.resolved_by,
    resolvedAt: row.resolved_at?.toISOString() ?? null,
    undoes: undoes.get(row.step_id) ?? null,
  };
}

/** One page of the queue as `viewer` (the signed-in person's actor name) sees it: "mine" means theirs. */
export async function listReviewCases(db: StaffReadable, query: ReviewQueueQuery, viewer: string): Promise<Page<ReviewCaseSummary> & { items: ReviewCaseSummary[] }> {
  const reference = query.q?.match(REFERENCE_PATTERN);
  const workflowPrefix = reference ? `${reference[1]}${reference[2]}`.toLowerCase() : null;
  const rows = await run<CaseRow & { review_key: string }>(db, sql.listReviewCases, [
    query.status,
    query.adapter ?? null,
    query.q && !reference ? containing(query.q) : null,
    workflowPrefix,
    query.cursor?.[0] ?? null,
    query.cursor?.[1] ?? null,
    query.limit + 1,
    query.holder === "mine" ? viewer : null,
    query.holder === "unassigned",
    query.overdue ?? false,
  ]);
  const page = rows.slice(0, query.limit);
  const undoes = await readUndoes(db, page.map((row) => row.step_id));
  const last = page.at(-1);
  return {
    items: page.map((row) => summaryOf(row, undoes)),
    nextCursor: rows.length > query.limit && last ? encodeCursor([last.review_key, last.id]) : null,
  };
}
