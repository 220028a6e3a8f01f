/**
 * One trace per request, in the test's own process (fenceline/testing's in-process worker, its
 * span collector, a real PostgreSQL and a real HTTP destination). Properties:
 *
 * - a request created inside an app's span is one trace: app span → fenceline.request →
 *   fenceline.step → fenceline.attempt → fenceline.adapter.call, and the destination receives the
 *   call span's traceparent from httpAdapter;
 * - the attempt's span says what Fenceline knows: step, fencing term, epoch, checkpoint reached,
 *   outcome, verification method;
 * - a paused attempt that acts on its stale view after its lease expired: its refused receipt is a
 *   fencing rejection event (and a late observation) on its own attempt's span, and the recovery
 *   decision is a fenceline.recovery span with a lease-expired event, all in the request's trace;
 * - nothing from the input reaches any attribute or event by default; a workflow's opt-in
 *   attributes are recorded bounded and redacted.
 */
import { context, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, done, effect, httpAdapter } from "@/lib/sdk";
import { createPool } from "@/lib/db/pool";
import { traceUrlOfRequest } from "@/lib/requests/trace-link";
import { collectSpans, createTestEnvironment, fakeDestination, type CollectedSpan, type SpanCollector, type TestEnvironment } from "@/lib/sdk/testing";
import { startRecordingDestination, type RecordingDestination } from "./test-receiver";

const milestone = { upcoming: "Sending", current: "Sending it", done: "Sent" };
/** The input carries a marker that must never reach a span. */
const MARKER = "marker-4f1c9e-do-not-trace";
const input = z.object({ orderId: z.string(), note: z.string(), cardNumber: z.string().optional() });

let orders: RecordingDestination;

const destination = httpAdapter<{ orderId: string; note: string }>({
  name: "traced-destination",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 2_000,
  concurrencyLimit: 4,
  request: { url: () => `${orders.url}/orders` },
});

const traced = defineWorkflow({
  kind: "traced-call",
  version: 1,
  input,
  steps: { send: { adapter: destination, milestone, run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId, note: ctx.input.note })) } },
});

const mailer = fakeDestination<{ to: string }>("idempotent", { name: "traced-mailer" });
const mail = defineWorkflow({
  kind: "traced-mail",
  version: 1,
  input,
  steps: { send: { adapter: mailer.adapter, milestone, run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.note })) } },
});

const optedIn = defineWorkflow({
  kind: "traced-opt-in",
  version: 1,
  input,
  traceAttributes: (value) => ({ orderId: value.orderId, cardNumber: value.cardNumber ?? "", "not a name!": "x", long: "y".repeat(500) }),
  steps: { send: { adapter: mailer.adapter, milestone, run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.orderId })) } },
});

const awaited = defineWorkflow({ kind: "traced-wait", version: 1, input })
  .event("confirmed", { milestone, name: "traced.confirmed", key: (ctx) => ctx.input.orderId, payload: z.object({ ok: z.boolean() }), timeoutMs: 3_600_000 })
  .step("after", { dependsOn: ["confirmed"], milestone, run: async () => done() });

let env: TestEnvironment;
let spans: SpanCollector;

beforeAll(async () => {
  orders = await startRecordingDestination();
  spans = await collectSpans();
  env = await createTestEnvironment({ workflows: [traced, mail, optedIn, awaited] });
});

afterAll(async () => {
  await env?.close();
  await spans?.stop();
  await orders?.close();
});

/** The request's spans once its attempts' spans have ended: a request ends a moment before them. */
const settled = (requestId: string, attempts = 1) =>
  spans.waitFor(requestId, (all) => all.filter((span) => span.name === "fenceline.step").length >= attempts);
const named = (all: readonly CollectedSpan[], name: string) => all.filter((span) => span.name === name);
const only = (all: readonly CollectedSpan[], name: string) => {
  const found = named(all, name);
  expect(found.map((span) => span.name)).toEqual([name]);
  return found[0]!;
};
/** Every string an exporter would send: attribute values and event attribute values. */
const recordedStrings = (all: readonly CollectedSpan[]) =>
  all.flatMap((span) => [span.name, ...Object.values(span.attributes), ...span.events.flatMap((event) => [event.name, ...Object.values(event.attributes)])]).map(String);

describe("one trace from the app's span to the destination", () => {
  test("create, claim, attempt and the adapter's call are one trace under the app's span, and the destination sees its traceparent", async () => {
    const app = trace.getTracer("the-app").startSpan("app.checkout");
    const request = await context.with(trace.setSpan(context.active(), app), () => env.createRequest(traced, { orderId: "o-1", note: MARKER }));
    app.end();
    await env.waitForRequest(request.id, "completed");

    const all = await settled(request.id);
    expect(new Set(all.map((span) => span.traceId))).toEqual(new Set([app.spanContext().traceId]));
    const created = only(all, "fenceline.request");
    const step = only(all, "fenceline.step");
    const attempt = only(all, "fenceline.attempt");
    const call = only(all, "fenceline.adapter.call");
    expect(created.parentSpanId).toBe(app.spanContext().spanId);
    expect(step.parentSpanId).toBe(created.spanId);
    expect(attempt.parentSpanId).toBe(step.spanId);
    expect(call.parentSpanId).toBe(attempt.spanId);
    expect(created.attributes).toMatchObject({ "fenceline.kind": "traced-call", "fenceline.request.id": request.id, "fenceline.request.created": true });
    expect(step.attributes).toMatchObject({ "fenceline.kind": "traced-call", "fenceline.request.id": request.id, "fenceline.step": "send", "fenceline.fencing_term": "1", "fenceline.epoch": expect.any(String), "fenceline.outcome": "completed" });
    expect(attempt.attributes).toMatchObject({
      "fenceline.step": "send",
      "fenceline.fencing_term": "1",
      "fenceline.checkpoint": "receipt_committed",
      "fenceline.outcome": "completed",
      "fenceline.verification_method": "direct_response",
    });
    expect(attempt.events).toEqual([]);
    // The destination saw the call span's context: its own spans would be the call's children.
    const sent = orders.calls.find((call) => call.body.includes('"o-1"'));
    expect(sent?.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
  });

  test("the request's trace link names the trace its spans are in", async () => {
    const app = trace.getTracer("the-app").startSpan("app.checkout");
    const request = await context.with(trace.setSpan(context.active(), app), () => env.createRequest(traced, { orderId: "o-8", note: "link" }));
    app.end();
    await env.waitForRequest(request.id, "completed");
    const pool = createPool(env.databaseUrl, { applicationName: "trace-link-test", max: 1 });
    try {
      expect(await traceUrlOfRequest(pool, request.id, "https://jaeger.example/trace/{traceId}")).toBe(`https://jaeger.example/trace/${app.spanContext().traceId}`);
      expect(await traceUrlOfRequest(pool, request.id, undefined)).toBeNull();
    } finally {
      await pool.end();
    }
  });

  test("a request created outside any span starts its own trace at fenceline.request", async () => {
    const request = await env.createRequest(traced, { orderId: "o-2", note: "plain" });
    await env.waitForRequest(request.id, "completed");
    const all = await settled(request.id);
    const created = only(all, "fenceline.request");
    expect(created.parentSpanId).toBeNull();
    expect(new Set(all.map((span) => span.traceId)).size).toBe(1);
    expect(named(all, "fenceline.adapter.call")).toHaveLength(1);
  });
});

describe("engine events on the spans", () => {
  test("a stale attempt's refused receipt is a fencing rejection on its own attempt's span, and the recovery continues the trace", async () => {
    const paused = env.faults.pauseAt("before_receipt", { kind: "traced-mail" });
    const request = await env.createRequest(mail, { orderId: "o-3", note: "grace" });
    const stopped = await paused.reached;
    await env.expireLease(stopped);
    await env.waitForRequest(request.id, "completed");
    paused.resume();
    await env.waitForStep(request.id, "send", "has a late observation", (detail) => detail.lateObservations.length > 0);

    const all = await spans.waitFor(request.id, (seen) => seen.some((span) => span.name === "fenceline.attempt" && span.events.some((event) => event.name === "fenceline.fencing_rejection")));
    expect(new Set(all.map((span) => span.traceId)).size).toBe(1);
    const created = only(all, "fenceline.request");
    const recovery = only(all, "fenceline.recovery");
    expect(recovery.parentSpanId).toBe(created.spanId);
    expect(recovery.attributes).toMatchObject({ "fenceline.recovery.category": "reconcile", "fenceline.recovery.trigger": "lease_expired", "fenceline.fencing_term": "1" });
    expect(recovery.events.map((event) => event.name)).toContain("fenceline.lease_expired");

    const attempt = only(all, "fenceline.attempt");
    expect(attempt.attributes).toMatchObject({ "fenceline.fencing_term": "1", "fenceline.outcome": "authority_lost" });
    const rejection = attempt.events.find((event) => event.name === "fenceline.fencing_rejection");
    expect(rejection?.attributes).toMatchObject({ "fenceline.operation": "commit_receipt", "fenceline.reason": "expired", "fenceline.fencing_term": "1" });
    expect(attempt.events.map((event) => event.name)).toContain("fenceline.late_observation");
    expect(attempt.status).toBe("error");
  });

  test("an opaque destination's unknown outcome opens a review case: an event on the recovery span", async () => {
    const opaque = fakeDestination<{ to: string }>("opaque", { name: "traced-printer" });
    const print = defineWorkflow({
      kind: "traced-print",
      version: 1,
      input,
      steps: { send: { adapter: opaque.adapter, milestone, run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.note })) } },
    });
    const local = await createTestEnvironment({ workflows: [print] });
    try {
      local.faults.answerLost({ step: "send", kind: "traced-print" });
      const request = await local.createRequest(print, { orderId: "o-4", note: "ada" });
      await local.waitForStep(request.id, "send", "has a review case", (detail) => detail.reviewCases.length > 0);
      const recovery = named(await spans.waitFor(request.id, (seen) => seen.some((span) => span.name === "fenceline.recovery")), "fenceline.recovery");
      expect(recovery.flatMap((span) => span.events.map((event) => event.name))).toContain("fenceline.review_case_opened");
      expect(recovery.map((span) => span.attributes["fenceline.recovery.category"])).toContain("review");
    } finally {
      await local.close();
    }
  });
});

describe("events sent to a waiting request", () => {
  test("an event sent inside the sender's span is a fenceline.event span there, linked to the waiting request's trace", async () => {
    const request = await env.createRequest(awaited, { orderId: "o-7", note: "wait" });
    await env.waitForStep(request.id, "confirmed", "waits", (detail) => detail.step.state === "waiting");
    const requestSpan = only(spans.spansOf(request.id), "fenceline.request");
    const sender = trace.getTracer("the-sender").startSpan("warehouse.confirm");
    const sent = await context.with(trace.setSpan(context.active(), sender), () => env.sendEvent("traced.confirmed", "o-7", { ok: true }));
    sender.end();
    expect(sent.consumedBy).toEqual({ requestId: request.id, step: "confirmed" });
    const event = spans.all().find((span) => span.name === "fenceline.event" && span.traceId === sender.spanContext().traceId);
    expect(event?.parentSpanId).toBe(sender.spanContext().spanId);
    expect(event?.links).toEqual([{ traceId: requestSpan.traceId, spanId: requestSpan.spanId }]);
    expect(event?.attributes).toMatchObject({ "fenceline.event.name": "traced.confirmed", "fenceline.event.consumed_by.request_id": request.id });
    await env.waitForRequest(request.id, "completed");
  });
});

describe("what spans may carry", () => {
  test("nothing from the input appears in any attribute or event by default", async () => {
    const request = await env.createRequest(traced, { orderId: "o-5", note: MARKER });
    await env.waitForRequest(request.id, "completed");
    const all = await settled(request.id);
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect(recordedStrings(all).filter((value) => value.includes(MARKER) || value.includes("o-5"))).toEqual([]);
    expect(Object.keys(Object.assign({}, ...all.map((span) => span.attributes))).filter((key) => key.startsWith("fenceline.input."))).toEqual([]);
  });

  test("a workflow's opt-in attributes are recorded bounded and redacted", async () => {
    const request = await env.createRequest(optedIn, { orderId: "o-6", note: MARKER, cardNumber: "4242424242424242" });
    await env.waitForRequest(request.id, "completed");
    const all = await settled(request.id);
    const attempt = only(all, "fenceline.attempt");
    expect(attempt.attributes["fenceline.input.orderId"]).toBe("o-6");
    expect(attempt.attributes["fenceline.input.cardNumber"]).toBe("[redacted]");
    expect(attempt.attributes["fenceline.input.not a name!"]).toBeUndefined();
    expect(String(attempt.attributes["fenceline.input.long"]).length).toBeLessThanOrEqual(128);
    expect(recordedStrings(all).filter((value) => value.includes(MARKER) || value.includes("4242424242424242"))).toEqual([]);
  });
});
