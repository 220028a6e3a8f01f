/**
 * A request as the app that created it reads it: its kind and pinned version, status, tracking
 * link, and the end-user projection its customer sees. Apps read only their own requests; staff
 * read any.
 */
import type { Pool } from "pg";
import { encodeCursor } from "@/lib/api/cursor";
import type { StaffSnapshot } from "@/lib/db/read-pool-types";
import { readSnapshot } from "@/lib/db/snapshot";
import { run, type NamedSql, type Queryable } from "@/lib/engine/db";
import { NotFoundError, RequestEndedError } from "@/lib/engine/errors";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { planCompensations } from "@/lib/compensation/plan";
import { readCompensation, type CompensationView } from "@/lib/compensation/read";
import type { RequestRecord, RequestStatus, RequestWithProgress } from "./types";

type Row = {
  id: string;
  kind: string;
  version: number;
  status: RequestStatus;
  status_reason: string | null;
  tracking_token: string;
  created_at: Date;
  updated_at: Date;
  deadline_at: Date | null;
  priority: number;
  concurrency_key: string | null;
  created_key: string;
};

const COLUMNS = `w.id, w.kind, w.version, w.status, w.status_reason, w.tracking_token, w.created_at, w.updated_at, w.deadline_at,
       w.priority, w.concurrency_key,
       to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;

/** Request $1, when requester $2 is null (staff) or made it. */
const readRequestSql: NamedSql = {
  name: "fl_read_request",
  text: `SELECT ${COLUMNS} FROM workflow w WHERE w.id = $1 AND ($2::text IS NULL OR w.requester = $2)`,
};

/** Requests of requester $1, newest first: $2 kind, $3 status, $4/$5 cursor (created_at, id), $6 limit. */
const listRequestsOfSql: NamedSql = {
  name: "fl_list_requests_of",
  text: `
SELECT ${COLUMNS}
FROM workflow w
WHERE w.requester = $1
  AND ($2::text IS NULL OR w.kind = $2)
  AND ($3::workflow_status IS NULL OR w.status = $3)
  AND ($4::timestamptz IS NULL OR (w.created_at, w.id) < ($4::timestamptz, $5::uuid))
ORDER BY w.created_at DESC, w.id DESC
LIMIT $6`,
};

export const trackUrlOf = (trackingToken: string): string => `/track/${trackingToken}`;

const recordOf = (row: Row): RequestRecord => ({
  id: row.id,
  kind: row.kind,
  version: row.version,
  status: row.status,
  statusReason: row.status_reason,
  trackingToken: row.tracking_token,
  trackUrl: trackUrlOf(row.tracking_token),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  deadlineAt: row.deadline_at?.toISOString() ?? null,
  priority: row.priority,
  concurrencyKey: row.concurrency_key,
});

/** Request `id` if `requester` made it (any request when null), else null. */
export async function readRequest(db: Queryable, id: string, requester: string | null): Promise<RequestRecord | null> {
  const [row] = await run<Row>(db, readRequestSql, [id, requester]);
  return row ? recordOf(row) : null;
}

/**
 * The request with what its end user sees, inside a snapshot of the primary already open (the
 * request's status and its progress of one moment); NotFoundError when `requester` did not make it.
 */
export async function requestWithProgressIn(snapshot: StaffSnapshot, id: string, requester: string | null): Promise<RequestWithProgress> {
  const [row] = await run<Row>(snapshot, readRequestSql, [id, requester]);
  const progress = row && (await trackingViewByWorkflowId(snapshot, id));
  if (!row || !progress) throw new NotFoundError("request", id);
  return { ...recordOf(row), progress };
}

/** The request with what its end user sees, read in one snapshot; NotFoundError when `requester` did not make it. */
export async function readRequestWithProgress(pool: Pool, id: string, requester: string | null): Promise<RequestWithProgress> {
  return readSnapshot(pool, (snapshot) => requestWithProgressIn(snapshot, id, requester));
}

export type RequestsOfQuery = {
  readonly kind?: string;
  readonly status?: RequestStatus;
  readonly cursor?: readonly [string, string];
  readonly limit: number;
};

export async function listRequestsOf(db: Queryable, requester: string, query: RequestsOfQuery): Promise<{ items: RequestRecord[]; nextCursor: string | null }> {
  const [cursorAt, cursorId] = query.cursor ?? [null, null];
  const rows = await run<Row>(db, listRequestsOfSql, [requester, query.kind ?? null, query.status ?? null, cursorAt, cursorId, query.limit + 1]);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return { items: page.map(recordOf), nextCursor: rows.length > query.limit && last ? encodeCursor([last.created_key, last.id]) : null };
}

/**
 * Cancels request `id` (`reason`) if it is active and, with `seenVersion`, its version is still
 * that one (one guarded statement: lib/engine/workflow.ts cancelWorkflow), then plans its undos
 * now rather than at the keepers' next pass. False when nothing was cancelled.
 */
export async function cancelActiveRequest(pool: Pool, id: string, reason: string, seenVersion: string | null = null): Promise<boolean> {
  if (!(await cancelWorkflow(pool, id, reason, seenVersion))) return false;
  await planCompensations(pool, [id]);
  return true;
}

/**
 * Cancels a request of `requester` (any, for staff): running steps see it at their next fenced
 * write. A request that is no longer active (completed, failed, already cancelled or being
 * undone) is refused with RequestEndedError: a completed request is never undone. The answer
 * says what will be undone (`compensation`), when its kind undoes on cancel.
 */
export async function cancelRequest(pool: Pool, id: string, requester: string | null, reason: string): Promise<RequestWithProgress & { compensation: CompensationView | null }> {
  const request = await readRequest(pool, id, requester);
  if (!request) throw new NotFoundError("request", id);
  if (!(await cancelActiveRequest(pool, id, reason))) {
    const now = await readRequest(pool, id, requester);
    throw new RequestEndedError(id, now?.status ?? request.status);
  }
  const [withProgress, compensation] = await readSnapshot(pool, (snapshot) => Promise.all([requestWithProgressIn(snapshot, id, requester), readCompensation(snapshot, id)]));
  return { ...withProgress, compensation };
}
