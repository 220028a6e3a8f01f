/**
 * W3C trace context as Fenceline keeps it: the `traceparent` of the span that created a request,
 * stored with the request so that spans written later, by other processes, are its children.
 * Only `@opentelemetry/api` is touched here: with no SDK registered every call is a few
 * allocations, and a traceparent passes through untouched (the API's no-op tracer hands a
 * parent's span context on to its children), so a traced app reaches a traced destination even
 * through a worker that does not trace.
 */
import { isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type Context, type SpanContext } from "@opentelemetry/api";

/** Version 00 of the header, lower-case hex, as the migration's CHECK constraint has it. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a traceparent names, or null when it is absent, malformed or all zeros. */
export function parseTraceParent(value: string | null | undefined): SpanContext | null {
  if (typeof value !== "string") return null;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return null;
  const spanContext: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : null;
}

/** The traceparent of a span context, or null when it is not valid. */
export function formatTraceParent(spanContext: SpanContext): string | null {
  if (!isSpanContextValid(spanContext)) return null;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? "01" : "00"}`;
}

/** The traceparent of the span a context holds, or null. */
export function traceParentOf(ctx: Context): string | null {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext ? formatTraceParent(spanContext) : null;
}

/** A context whose parent span is the one a stored traceparent names; the root context when there is none. */
export function contextOfTraceParent(value: string | null | undefined): Context {
  const spanContext = parseTraceParent(value);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/** The trace id of a traceparent, or null. */
export function traceIdOf(value: string | null | undefined): string | null {
  return parseTraceParent(value)?.traceId ?? null;
}

/**
 * Headers that carry a context's trace to the next hop: `{ traceparent }`, or none when the
 * context holds no valid span. Only the traceparent: `tracestate` and baggage may carry an app's
 * own data, and Fenceline does not pass them on.
 */
export function traceHeadersOf(ctx: Context): Readonly<Record<string, string>> {
  const traceparent = traceParentOf(ctx);
  return traceparent === null ? NO_HEADERS : { traceparent };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
