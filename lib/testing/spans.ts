/**
 * Collecting the spans a test's requests produce, in the test's own process: an in-memory
 * exporter behind the OpenTelemetry SDK, registered as the process's tracer provider for as long
 * as the collector lives. The SDK (`@opentelemetry/sdk-trace-node`) is loaded only here, when a
 * test asks for spans.
 */
import { context, propagation, ProxyTracerProvider, trace, type AttributeValue } from "@opentelemetry/api";
import { markTracingActive } from "@/lib/telemetry/spans";

/** One finished span as a test reads it. */
export type CollectedSpan = {
  /** `fenceline.request`, `fenceline.step`, `fenceline.attempt`, `fenceline.adapter.call`, `fenceline.recovery`, or a span of your own. */
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** The parent span's id; null for a trace's root. */
  readonly parentSpanId: string | null;
  readonly attributes: Readonly<Record<string, AttributeValue | undefined>>;
  /** Engine events on the span, in order: `fenceline.fencing_rejection`, `fenceline.lease_expired`… */
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue | undefined>> }[];
  /** Spans of other traces this one links to (an event's span links to the waiting request's). */
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** `unset`, `ok` or `error`. */
  readonly status: "unset" | "ok" | "error";
};

/** What {@link collectSpans} returns. */
export type SpanCollector = {
  /**
   * The finished spans of the traces request `requestId` belongs to, in the order they ended:
   * its `fenceline.*` spans and any span of yours in the same trace (the one around
   * `requests.create`). Ask after the request has ended (`env.waitFor…`), since a span is
   * collected when it ends.
   */
  spansOf(requestId: string): CollectedSpan[];
  /**
   * Waits until the spans of request `requestId` satisfy `until` (checked whenever a span ends),
   * then returns them. A request ends a moment before its worker ends the step's spans: wait
   * for the span you assert on. Throws after `timeoutMs` (default 10 s) with the spans seen.
   */
  waitFor(requestId: string, until: (spans: readonly CollectedSpan[]) => boolean, options?: { readonly timeoutMs?: number }): Promise<CollectedSpan[]>;
  /** Every finished span collected so far. */
  all(): CollectedSpan[];
  /** Forgets the spans collected so far. */
  clear(): void;
  /** Unregisters the collector; spans started afterwards are not recorded. Call it in `afterAll`. */
  stop(): Promise<void>;
};

/**
 * Starts collecting spans in this process: registers an OpenTelemetry tracer provider that keeps
 * every span in memory, with W3C trace context propagation. Call it before creating the test
 * environment's requests. Needs the optional peer `@opentelemetry/sdk-trace-node` (2.x), and a
 * process where no other tracer provider was registered (throws otherwise).
 *
 * @example
 * ```ts
 * const spans = await collectSpans();
 * const request = await env.createRequest(checkout, { orderId: "o-1", amountCents: 500 });
 * await env.waitForEnd(request.id);
 * const attempt = spans.spansOf(request.id).find((span) => span.name === "fenceline.attempt");
 * expect(attempt?.attributes["fenceline.outcome"]).toBe("completed");
 * await spans.stop();
 * ```
 */
export async function collectSpans(): Promise<SpanCollector> {
  const sdk = await import("@opentelemetry/sdk-trace-node").catch((error: unknown) => {
    throw new Error("collectSpans needs @opentelemetry/sdk-trace-node 2.x: npm install --save-dev @opentelemetry/sdk-trace-node", { cause: error });
  });
  const exporter = new sdk.InMemorySpanExporter();
  const waiting = new Set<() => void>();
  // After the exporting processor: a span is in the exporter when the waiters look.
  const notifying = {
    onStart: () => undefined,
    onEnd: () => queueMicrotask(() => waiting.forEach((check) => check())),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const provider = new sdk.NodeTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter), notifying] });
  provider.register();
  const global = trace.getTracerProvider();
  if ((global instanceof ProxyTracerProvider ? global.getDelegate() : global) !== provider) {
    await provider.shutdown();
    throw new Error("collectSpans: another OpenTelemetry tracer provider is registered in this process; collect with its exporter instead");
  }
  markTracingActive(true);
  const all = (): CollectedSpan[] =>
    exporter.getFinishedSpans().map((span) => ({
      name: span.name,
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId ?? null,
      attributes: { ...span.attributes },
      events: span.events.map((event) => ({ name: event.name, attributes: { ...(event.attributes ?? {}) } })),
      links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
      status: span.status.code === 2 ? "error" : span.status.code === 1 ? "ok" : "unset",
    }));
  const spansOf = (requestId: string): CollectedSpan[] => {
    const spans = all();
    const traces = new Set(spans.filter((span) => span.attributes["fenceline.request.id"] === requestId).map((span) => span.traceId));
    return spans.filter((span) => traces.has(span.traceId));
  };
  return {
    all,
    spansOf,
    waitFor: (requestId, until, options = {}) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const spans = spansOf(requestId);
          if (!until(spans)) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve(spans);
        };
        const timeoutMs = options.timeoutMs ?? 10_000;
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`spans of request ${requestId} did not arrive within ${timeoutMs} ms; seen: ${spansOf(requestId).map((span) => span.name).join(", ") || "none"}`));
        }, timeoutMs);
        waiting.add(check);
        check();
      }),
    clear: () => exporter.reset(),
    stop: async () => {
      markTracingActive(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
