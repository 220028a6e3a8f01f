/**
 * The link from a request's or a step's page to its trace in the operator's trace UI (Jaeger,
 * Tempo, Honeycomb…): FENCELINE_TRACE_URL is a URL template with `{traceId}` in it, e.g.
 * `https://jaeger.example/trace/{traceId}`. No link when the template is unset or malformed,
 * or when the request was created outside a trace.
 */
import { traceIdOf } from "./trace-context";

const PLACEHOLDER = "{traceId}";

/** The trace UI's URL for a stored traceparent, or null. */
export function traceUrlOf(traceParent: string | null | undefined, template: string | undefined = process.env.FENCELINE_TRACE_URL): string | null {
  const traceId = traceIdOf(traceParent);
  if (traceId === null || !template || !template.includes(PLACEHOLDER)) return null;
  const url = template.replaceAll(PLACEHOLDER, traceId);
  if (!URL.canParse(url)) return null;
  const protocol = new URL(url).protocol;
  return protocol === "https:" || protocol === "http:" ? url : null;
}
