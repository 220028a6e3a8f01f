/**
 * The pieces of tracing that need no database. Properties:
 *
 * - tracing is on only when the standard OTEL_* variables ask for it (an exporter other than
 *   `none`, or an OTLP endpoint) and OTEL_SDK_DISABLED does not turn it off;
 * - a traceparent is stored only in its W3C form: malformed or all-zero ones are ignored;
 * - the trace link is built from FENCELINE_TRACE_URL only for a valid traceparent and an http(s)
 *   template with `{traceId}`;
 * - the client's requests.create and events.send carry the app's active span as `traceparent`,
 *   and nothing when no span is active;
 * - a workflow's opt-in attributes are bounded and redacted.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { context, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createClient } from "@/lib/client/client";
import { collectSpans, type SpanCollector } from "@/lib/testing/spans";
import { tracingRequested } from "./config";
import { traceUrlOf } from "./link";
import { MAX_OPT_IN_ATTRIBUTES, optInAttributes, REDACTED } from "./redact";
import { formatTraceParent, parseTraceParent } from "./trace-context";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("OTEL_* decides whether tracing starts", () => {
  test.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: "fenceline" }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" }, true],
    [{ OTEL_TRACES_EXPORTER: "console" }, true],
    [{ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, false],
    [{ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }, false],
  ] as [NodeJS.ProcessEnv, boolean][])("%o → %s", (env, on) => {
    expect(tracingRequested(env)).toBe(on);
  });
});

describe("traceparents and trace links", () => {
  test("a valid traceparent round-trips; malformed and all-zero ones are ignored", () => {
    const parsed = parseTraceParent(VALID);
    expect(parsed && formatTraceParent(parsed)).toBe(VALID);
    for (const bad of ["", "garbage", VALID.toUpperCase(), `01${VALID.slice(2)}`, "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"]) {
      expect(parseTraceParent(bad), bad).toBeNull();
    }
  });

  test("the link fills {traceId} of an http(s) template, and is absent otherwise", () => {
    expect(traceUrlOf(VALID, "https://jaeger.example/trace/{traceId}")).toBe("https://jaeger.example/trace/4bf92f3577b34da6a3ce929d0e0e4736");
    expect(traceUrlOf(VALID, undefined)).toBeNull();
    expect(traceUrlOf(VALID, "https://jaeger.example/trace/")).toBeNull();
    expect(traceUrlOf(VALID, "javascript:alert({traceId})")).toBeNull();
    expect(traceUrlOf(null, "https://jaeger.example/trace/{traceId}")).toBeNull();
    expect(traceUrlOf("garbage", "https://jaeger.example/trace/{traceId}")).toBeNull();
  });
});

describe("opt-in attributes", () => {
  test("bounded and redacted: secrets by name, long strings cut, bad names and values dropped, a throw records nothing", () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, i]));
    expect(Object.keys(optInAttributes(() => many, {}))).toHaveLength(MAX_OPT_IN_ATTRIBUTES);
    const picked = optInAttributes(() => ({ orderId: "o-1", apiKey: "k", password: "p", cardNumber: "4242", long: "x".repeat(1_000), "bad name": 1, nested: { a: 1 } }), {});
    expect(picked).toMatchObject({ "fenceline.input.orderId": "o-1", "fenceline.input.apiKey": REDACTED, "fenceline.input.password": REDACTED, "fenceline.input.cardNumber": REDACTED });
    expect(String(picked["fenceline.input.long"]).length).toBe(128);
    expect(Object.keys(picked)).not.toContain("fenceline.input.bad name");
    expect(Object.keys(picked)).not.toContain("fenceline.input.nested");
    expect(optInAttributes(() => { throw new Error("boom"); }, {})).toEqual({});
    expect(optInAttributes(null, { orderId: "o-1" })).toEqual({});
  });
});

describe("the client propagates the app's trace context", () => {
  const received: Record<string, string | undefined>[] = [];
  let server: http.Server;
  let url = "";
  let spans: SpanCollector;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      request.resume().on("end", () => {
        received.push({ path: request.url, traceparent: request.headers.traceparent as string | undefined, tracestate: request.headers.tracestate as string | undefined });
        const body = request.url === "/api/events" ? { id: "e-1", name: "n", key: "k", receivedAt: new Date(0).toISOString(), duplicate: false, consumedBy: null } : { id: "r-1", trackUrl: "/track/t" };
        response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The app's own SDK, as an app that traces has one.
    spans = await collectSpans();
  });

  afterAll(async () => {
    await spans?.stop();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  test("requests.create and events.send inside the app's span send its traceparent, and none outside a span", async () => {
    const client = createClient({ url, apiKey: "fl_app_test" });
    const app = trace.getTracer("the-app").startSpan("app.checkout");
    await context.with(trace.setSpan(context.active(), app), async () => {
      await client.requests.create("checkout", { orderId: "o-1" });
      await client.events.send("warehouse.confirmed", "o-1", {});
    });
    app.end();
    await client.requests.create("checkout", { orderId: "o-2" });
    const expected = formatTraceParent(app.spanContext());
    expect(received.map((seen) => [seen.path, seen.traceparent])).toEqual([
      ["/api/requests", expected],
      ["/api/events", expected],
      ["/api/requests", undefined],
    ]);
    // Only the traceparent: tracestate may carry the app's own data.
    expect(received.every((seen) => seen.tracestate === undefined)).toBe(true);
  });
});
