/**
 * The link from a request's page to its trace (FENCELINE_TRACE_URL, lib/telemetry/link.ts): the
 * request page's half of issue 33; the step page reads the traceparent with the step's detail.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { run } from "@/lib/engine/db";
import { traceUrlOf } from "@/lib/telemetry/link";

const requestTraceParent = {
  name: "fl_request_trace_parent",
  text: `SELECT trace_parent FROM workflow WHERE id = $1`,
};

/** The trace UI's URL for request `requestId`, or null (no template, or the request was created outside a trace). Reads from a replica where there is one. */
export async function traceUrlOfRequest(db: StaffReadable, requestId: string, template: string | undefined = process.env.FENCELINE_TRACE_URL): Promise<string | null> {
  if (!template) return null;
  const [row] = await run<{ trace_parent: string | null }>(db, requestTraceParent, [requestId]);
  return traceUrlOf(row?.trace_parent ?? undefined, template);
}
