/**
 * Bulk actions on requests: cancel or rerun every request a filter of the requests list matches.
 *
 * An action moves through: previewed (a count and the first matches, nothing written) → started
 * (one statement snapshots exactly the previewed number of matches as its items, or refuses
 * when the filter now matches another number) → running (a runner, holding a short lease on the
 * action's row, takes pending items in order, acts on each through the same function the
 * request's page uses, and ends each item done or skipped with why) → finished (no item pending).
 * A runner that dies leaves its lease to expire; `resumeBulkAction` (run by whoever reads the
 * progress) carries on from what is still pending. Each item ends once (a guarded update), so
 * two runners never report one request twice, and each request's own action is idempotent.
 */
import type { Pool } from "pg";
import { run } from "@/lib/engine/db";
import { FencelineError, NotFoundError, RequestEndedError } from "@/lib/engine/errors";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { cancelFromPage, currentRequest, DEFAULT_RERUN_BUDGET, rerunFromStep } from "@/lib/requests/page/actions";
import type { WorkflowStatus } from "@/lib/engine/vocabulary";
import * as sql from "./sql";

/** At most this many requests per bulk action: narrow the filter for more. */
export const MAX_BULK_REQUESTS = 500;
/** The preview lists this many of the matches. */
export const PREVIEW_SAMPLE = 20;
const BATCH = 20;
const RUNNER_LEASE_MS = 15_000;
const SKIPPED_LISTED = 100;

export const BULK_ACTIONS = ["cancel", "rerun"] as const;
export type BulkActionKind = (typeof BULK_ACTIONS)[number];

export type BulkFilter = {
  readonly status?: WorkflowStatus | undefined;
  readonly kind?: string | undefined;
  readonly createdFrom?: string | undefined;
  readonly createdTo?: string | undefined;
  /** The app that created them. */
  readonly app?: string | undefined;
  /** A part of the reason they ended with (case-insensitive). */
  readonly reason?: string | undefined;
};

const filterParams = (f: BulkFilter) => [f.status ?? null, f.kind ?? null, f.createdFrom ?? null, f.createdTo ?? null, f.app ?? null, f.reason ?? null];

export type BulkPreview = {
  /** How many match, counted up to MAX_BULK_REQUESTS + 1. */
  readonly count: number;
  /** More match than one action may take. */
  readonly overLimit: boolean;
  readonly limit: number;
  readonly sample: { id: string; kind: string; status: WorkflowStatus; statusReason: string | null; requester: string; createdAt: string }[];
};

export async function previewBulk(db: StaffReadable, filter: BulkFilter): Promise<BulkPreview> {
  const [row] = await run<{ total: number; sample: BulkPreview["sample"] }>(db, sql.previewMatches, [...filterParams(filter), MAX_BULK_REQUESTS + 1, PREVIEW_SAMPLE]);
  const count = row!.total;
  return {
    count,
    overLimit: count > MAX_BULK_REQUESTS,
    limit: MAX_BULK_REQUESTS,
    sample: row!.sample.map((s) => ({ ...s, createdAt: new Date(s.createdAt).toISOString() })),
  };
}

/** The filter now matches another number of requests than the operator previewed: nothing started. */
export class BulkPreviewStaleError extends FencelineError {
  readonly code = "bulk_preview_stale";
  constructor(
    readonly expected: number,
    readonly matched: number,
  ) {
    super(
      matched > MAX_BULK_REQUESTS
        ? `the filter now matches more than ${MAX_BULK_REQUESTS} requests (the preview showed ${expected}): narrow it, preview again`
        : `the filter now matches ${matched} requests, not the ${expected} previewed: preview again`,
    );
  }
}

export type StartBulk = {
  readonly action: BulkActionKind;
  readonly filter: BulkFilter;
  readonly expectedCount: number;
  readonly reason: string;
  readonly actor: string;
  /** Sent again with a retried start: the same key is the same action. */
  readonly clientKey: string;
};

/** Starts a bulk action over exactly the previewed matches; returns its id (the earlier one for a repeated client key). */
export async function startBulk(pool: Pool, start: StartBulk): Promise<{ id: string; created: boolean }> {
  if (!Number.isInteger(start.expectedCount) || start.expectedCount < 1 || start.expectedCount > MAX_BULK_REQUESTS) {
    throw new RangeError(`expectedCount must be 1–${MAX_BULK_REQUESTS}`);
  }
  const rows = await run<{ id: string; created: boolean; matched: number }>(pool, sql.startBulkAction, [
    ...filterParams(start.filter),
    start.expectedCount,
    start.action,
    JSON.stringify(start.filter),
    start.reason,
    start.actor,
    start.clientKey,
  ]);
  const [row] = rows;
  if (!row) {
    const preview = await previewBulk(pool, start.filter);
    throw new BulkPreviewStaleError(start.expectedCount, preview.count);
  }
  return { id: row.id, created: row.created };
}

export type BulkProgress = {
  readonly id: string;
  readonly action: BulkActionKind;
  readonly filter: BulkFilter;
  readonly reason: string;
  readonly requestedBy: string;
  readonly state: "running" | "finished";
  readonly total: number;
  readonly done: number;
  readonly skipped: number;
  readonly pending: number;
  readonly runnerAlive: boolean;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly skippedItems: { requestId: string; why: string }[];
};

export async function readBulkProgress(db: StaffReadable, id: string): Promise<BulkProgress> {
  const [row] = await run<Record<string, unknown>>(db, sql.readProgress, [id, SKIPPED_LISTED]);
  if (!row) throw new NotFoundError("bulk action", id);
  return {
    id: String(row.id),
    action: row.action as BulkActionKind,
    filter: row.filter as BulkFilter,
    reason: String(row.reason),
    requestedBy: String(row.requested_by),
    state: row.state as BulkProgress["state"],
    total: Number(row.total),
    done: Number(row.done),
    skipped: Number(row.skipped),
    pending: Number(row.pending),
    runnerAlive: Boolean(row.runner_alive),
    createdAt: (row.created_at as Date).toISOString(),
    finishedAt: row.finished_at ? (row.finished_at as Date).toISOString() : null,
    skippedItems: row.skipped_items as BulkProgress["skippedItems"],
  };
}

/** What one request of the action came to: done, or skipped with why. */
async function actOn(pool: Pool, action: BulkActionKind, requestId: string, reason: string, actor: string): Promise<{ state: "done" | "skipped"; detail: string }> {
  try {
    const now = await currentRequest(pool, requestId);
    if (action === "cancel") {
      const outcome = await cancelFromPage(pool, requestId, now.version, reason, actor);
      return outcome.alreadyCancelled ? { state: "skipped", detail: "already cancelled" } : { state: "done", detail: "cancelled" };
    }
    const from = now.steps.find((s) => s.state !== "completed" && s.state !== "completed_without_effect");
    if (now.status !== "failed" || !from) return { state: "skipped", detail: `it is ${now.status}: only a request that could not be completed is rerun` };
    const outcome = await rerunFromStep(pool, { id: requestId, fromStepId: from.id, seenVersion: now.version, budget: DEFAULT_RERUN_BUDGET, reason, actor });
    return { state: "done", detail: `rerun from ${from.name}${outcome.toReview.length > 0 ? `; ${outcome.toReview.length} step(s) sent to review first` : ""}` };
  } catch (error) {
    if (error instanceof RequestEndedError) return { state: "skipped", detail: `it is ${error.status}: only an active request can be cancelled` };
    if (error instanceof FencelineError) return { state: "skipped", detail: error.message };
    throw error;
  }
}

/**
 * Works action `id` to the end if no live runner holds it: takes the runner's lease, then acts
 * on pending items in order, BATCH at a time, renewing the lease. Returns how many items it ended.
 */
export async function resumeBulkAction(pool: Pool, id: string): Promise<number> {
  const [held] = await run<{ action: BulkActionKind; reason: string; requested_by: string }>(pool, sql.takeRunner, [id, RUNNER_LEASE_MS]);
  if (!held) return 0;
  let ended = 0;
  for (;;) {
    const items = await run<{ workflow_id: string }>(pool, sql.nextItems, [id, BATCH, RUNNER_LEASE_MS]);
    if (items.length === 0) break;
    for (const { workflow_id: requestId } of items) {
      const outcome = await actOn(pool, held.action, requestId, held.reason, held.requested_by);
      const [marked] = await run(pool, sql.endItem, [id, requestId, outcome.state, outcome.detail]);
      if (marked) ended += 1;
    }
  }
  await run(pool, sql.finish, [id]);
  return ended;
}
