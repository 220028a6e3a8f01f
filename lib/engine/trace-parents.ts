/**
 * The traceparents stored with requests (migration 20261208600000_trace_context), for spans
 * written about a request by code that does not hold it: a recovery decision, an event that
 * settled one of its waits. Read only while tracing is active.
 */
import { run, type NamedSql, type Queryable } from "./db";

/** The traceparents stored with requests $1 (ids); requests without one are left out. */
export const requestTraceParents: NamedSql = {
  name: "fl_request_trace_parents",
  text: `SELECT id, trace_parent FROM workflow WHERE id = ANY($1::uuid[]) AND trace_parent IS NOT NULL`,
};

/** Request id → its stored traceparent, for the requests that have one. */
export async function traceParentsOf(db: Queryable, requestIds: readonly string[]): Promise<Map<string, string>> {
  if (requestIds.length === 0) return new Map();
  const rows = await run<{ id: string; trace_parent: string }>(db, requestTraceParents, [[...new Set(requestIds)]]);
  return new Map(rows.map((row) => [row.id, row.trace_parent]));
}
