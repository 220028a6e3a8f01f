import { randomBytes } from "node:crypto";
import { startOtlpReceiver, type ReceivedSpan } from "../lib/telemetry/test-receiver";
import { expect, test } from "./fixtures";
import { signInAs } from "./login";
import { createDelivery } from "./requests";

/**
 * Tracing as `npm start` runs it, with the standard OTEL_* variables set (playwright.config.ts):
 * the web app's instrumentation.ts starts the SDK, the demo workers start theirs, and both export
 * to the OTLP/HTTP receiver this spec starts on the configured port. A request created inside an
 * app's span is one trace from that span through the web app's `fenceline.request` to every
 * step's claim and attempt in the workers, nothing from its input in any attribute, and its page
 * links to the trace (FENCELINE_TRACE_URL).
 */

const OTLP_PORT = Number(process.env.E2E_OTLP_PORT ?? Number(process.env.E2E_PORT ?? 3100) + 2000);

/** True when `span` descends from the span with id `ancestor`, through spans of the same trace. */
function descendsFrom(span: ReceivedSpan, ancestor: string, spans: readonly ReceivedSpan[]): boolean {
  const byId = new Map(spans.filter((other) => other.traceId === span.traceId).map((other) => [other.spanId, other]));
  for (let parent = span.parentSpanId; parent !== null; parent = byId.get(parent)?.parentSpanId ?? null) {
    if (parent === ancestor) return true;
  }
  return false;
}

test("a request created inside an app's span is one trace through the web app and the workers, and its page links to it", async ({ page, request }) => {
  const receiver = await startOtlpReceiver({ port: OTLP_PORT });
  try {
    const traceId = randomBytes(16).toString("hex");
    const appSpanId = randomBytes(8).toString("hex");
    const recipient = `trace-${Date.now()}@example.test`;
    const created = await createDelivery(request, { recipient, message: "traced", deliverVia: "idempotent" }, `e2e-trace-${traceId}`, { traceparent: `00-${traceId}-${appSpanId}-01` });
    expect(created.status()).toBe(201);
    const { id } = (await created.json()) as { id: string };

    const ofTrace = (spans: readonly ReceivedSpan[]) => spans.filter((span) => span.traceId === traceId);
    const spans = ofTrace(
      await receiver.waitFor((all) => {
        const mine = ofTrace(all);
        return mine.some((span) => span.name === "fenceline.request") && mine.filter((span) => span.name === "fenceline.attempt" && span.attributes["fenceline.outcome"] === "completed").length >= 2;
      }, 60_000),
    );

    const [made] = spans.filter((span) => span.name === "fenceline.request");
    expect(made).toMatchObject({ service: "fenceline-web", attributes: { "fenceline.request.id": id, "fenceline.kind": "delivery", "fenceline.request.created": true } });
    expect(descendsFrom(made!, appSpanId, spans), "the web app's span is a descendant of the app's").toBe(true);

    const steps = spans.filter((span) => span.name === "fenceline.step");
    expect(steps.length).toBeGreaterThanOrEqual(2);
    for (const step of steps) {
      expect(step.service).toBe("fenceline-worker");
      // The stored traceparent is the request span's: a step claimed by any worker, at any time, joins it.
      expect(step.parentSpanId).toBe(made!.spanId);
      expect(step.attributes["fenceline.request.id"]).toBe(id);
    }
    for (const attempt of spans.filter((span) => span.name === "fenceline.attempt")) {
      expect(steps.map((step) => step.spanId)).toContain(attempt.parentSpanId);
    }
    const attempts = new Set(spans.filter((span) => span.name === "fenceline.attempt").map((span) => span.spanId));
    const calls = spans.filter((span) => span.name === "fenceline.adapter.call");
    expect(calls.length, "the effect steps' destination calls").toBeGreaterThanOrEqual(1);
    for (const call of calls) expect(attempts.has(call.parentSpanId ?? "")).toBe(true);
    // Nothing from the input: no attribute of the trace carries the recipient.
    const values = spans.flatMap((span) => Object.values(span.attributes).map(String));
    expect(values.filter((value) => value.includes(recipient))).toEqual([]);

    await signInAs(page, "engineer");
    await page.goto(`/requests/${id}`);
    await expect(page.getByTestId("trace-link")).toHaveAttribute("href", `http://127.0.0.1:${OTLP_PORT}/trace/${traceId}`);
  } finally {
    await receiver.close();
  }
});
