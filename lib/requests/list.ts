/**
 * The engineer's list of requests (workflows), newest first, with keyset pagination on
 * (created_at, id). The cursor carries created_at as the database wrote it, to the microsecond,
 * so no row is skipped or repeated at a page boundary.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { ListRequestsQuery, RequestSummary, RequestPage } from "@/lib/api/contract/engineer/requests";
import { encodeCursor } from "@/lib/api/cursor";
import { run, type NamedSql } from "@/lib/engine/db";
import { liveServersOf } from "@/lib/engine/sql/registration";
import { activeHeadlineOf } from "@/lib/projection/sql";
import { readWaitSummaries } from "@/lib/waits/read";
import { waitingForCondition } from "@/lib/waits/sql";
import { endedWithReason } from "./reason-filter";

/**
 * $1 status, $2 kind, $3 created from, $4 created to, $5 id or token prefix, $6/$7 cursor
 * (created_at, id), $8 limit, $9 the headline an active request's end user sees, $10 what a step of
 * it waits for now (`time`, `event`), $11 the app (requester), $12 a part of its status reason
 * (case-insensitive). Every filter is optional (NULL).
 */
export const listRequestsSql: NamedSql = {
  name: "fl_list_requests",
  text: `
SELECT w.id, w.kind, w.version, w.status, w.status_reason, w.requester, w.tracking_token,
       w.created_at, w.updated_at, w.deadline_at, w.steps_remaining,
       ${liveServersOf("w.kind", "w.version")} AS served_by,
       to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key,
       (SELECT count(*)::int FROM review_case rc WHERE rc.workflow_id = w.id AND rc.status = 'open') AS open_reviews,
       (SELECT coalesce(json_agg(json_build_object('id', s.id, 'name', s.name, 'adapter', s.adapter,
                                                   'state', s.state, 'fencingTerm', s.fencing_term)
                                 ORDER BY s.position), '[]'::json)
        FROM step s WHERE s.workflow_id = w.id) AS steps
FROM workflow w
WHERE ($1::workflow_status IS NULL OR w.status = $1)
  AND ($2::text IS NULL OR w.kind = $2)
  AND ($3::timestamptz IS NULL OR w.created_at >= $3)
  AND ($4::timestamptz IS NULL OR w.created_at < $4)
  AND ($5::text IS NULL OR left(w.id::text, length($5)) = lower($5) OR left(w.tracking_token, length($5)) = $5)
  AND ($6::timestamptz IS NULL OR (w.created_at, w.id) < ($6::timestamptz, $7::uuid))
  AND ($9::text IS NULL OR (w.status = 'active' AND ${activeHeadlineOf("w")} = $9))
  AND ($11::text IS NULL OR w.requester = $11)
  AND ${endedWithReason("$12", "w")}
  AND ($10::text IS NULL OR EXISTS (SELECT 1 FROM step ws WHERE ws.workflow_id = w.id AND ws.state = 'waiting' AND ${waitingForCondition("$10", "ws.id")}))
ORDER BY w.created_at DESC, w.id DESC
LIMIT $8`,
};

type Row = {
  id: string;
  kind: string;
  version: number;
  served_by: number;
  status: RequestSummary["status"];
  status_reason: string | null;
  requester: string;
  tracking_token: string;
  created_at: Date;
  updated_at: Date;
  deadline_at: Date | null;
  steps_remaining: number;
  created_key: string;
  open_reviews: number;
  steps: Omit<RequestSummary["steps"][number], "wait">[];
};

export async function listRequests(pool: StaffReadable, query: ListRequestsQuery): Promise<RequestPage> {
  const [cursorAt, cursorId] = query.cursor ?? [null, null];
  const rows = await run<Row>(pool, listRequestsSql, [
    query.status ?? null,
    query.kind ?? null,
    query.createdFrom ?? null,
    query.createdTo ?? null,
    query.q ?? null,
    cursorAt,
    cursorId,
    query.limit + 1,
    query.progress ?? null,
    query.waitingFor ?? null,
    query.app ?? null,
    query.reason ?? null,
  ]);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const waits = await readWaitSummaries(pool, page.flatMap((row) => row.steps.filter((step) => step.state === "waiting").map((step) => step.id)));
  return {
    items: page.map((row) => ({
      id: row.id,
      kind: row.kind,
      version: row.version,
      servedBy: row.served_by,
      status: row.status,
      statusReason: row.status_reason,
      requester: row.requester,
      trackingToken: row.tracking_token,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
      deadlineAt: row.deadline_at?.toISOString() ?? null,
      stepsRemaining: row.steps_remaining,
      openReviews: row.open_reviews,
      steps: row.steps.map((step) => ({ ...step, wait: waits.get(step.id) ?? null })),
    })),
    nextCursor: rows.length > query.limit && last ? encodeCursor([last.created_key, last.id]) : null,
  };
}
