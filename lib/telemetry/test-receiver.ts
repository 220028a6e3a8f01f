/**
 * A small OTLP/HTTP receiver for tests: it accepts `POST /v1/traces` with JSON bodies (what
 * `@opentelemetry/exporter-trace-otlp-http` sends, OTEL_EXPORTER_OTLP_PROTOCOL=http/json), decodes
 * the spans, and lets a test wait until the spans it expects have arrived. Test and benchmark
 * support only (the benchmark's receiver counts spans without keeping them: `keep: false`).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  events?: { name: string; attributes?: KeyValue[] }[];
  status?: { code?: number };
};
type ExportRequest = { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] };

/** One span as the receiver decoded it. */
export type ReceivedSpan = {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, string | number | boolean>> }[];
  readonly statusCode: number;
};

export type OtlpReceiver = {
  /** The endpoint for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Spans received so far, kept or not. */
  readonly received: () => number;
  /** Export requests that were not JSON trace exports (a wrong protocol), kept for the failure report. */
  readonly refused: string[];
  waitFor(until: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
};

const valueOf = (value: AnyValue): string | number | boolean =>
  value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue === undefined ? "" : Number(value.intValue));
const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));

/** `port`: a fixed one, for a process started before the receiver that was told where to export (0: any free port). */
export async function startOtlpReceiver(options: { readonly keep?: boolean; readonly port?: number } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  let received = 0;
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const waiting = new Set<() => void>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const type = request.headers["content-type"] ?? "";
      if (request.method !== "POST" || request.url !== "/v1/traces" || !type.startsWith("application/json")) {
        refused.push(`${request.method} ${request.url} ${type}`);
        response.writeHead(415).end();
        return;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      if (!keep) {
        // Counted without decoding: the benchmark's receiver should cost what a collector's socket does.
        received += text.match(/"spanId":/g)?.length ?? 0;
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      }
      const body = JSON.parse(text) as ExportRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)["service.name"] ?? "");
        for (const scope of resourceSpans.scopeSpans ?? []) {
          received += scope.spans?.length ?? 0;
          for (const span of scope.spans ?? []) {
            spans.push({
              service,
              name: span.name,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ? span.parentSpanId : null,
              attributes: attributesOf(span.attributes),
              events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
      for (const check of waiting) check();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    spans,
    received: () => received,
    refused,
    waitFor: (until, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!until(spans)) return;
          waiting.delete(check);
          clearTimeout(timer);
          resolve([...spans]);
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`the spans waited for did not arrive within ${timeoutMs} ms; received: ${spans.map((span) => `${span.service}/${span.name}`).join(", ") || "none"}${refused.length ? `; refused: ${refused.join(", ")}` : ""}`));
        }, timeoutMs);
        waiting.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One call a RecordingDestination received: the traceparent it was sent and its body. */
export type RecordedCall = { readonly traceparent: string | undefined; readonly body: string };

/** An HTTP destination for tests that records each call's traceparent and body and answers 201 `{ id: "order-<n>" }`. */
export type RecordingDestination = { readonly url: string; readonly calls: readonly RecordedCall[]; close(): Promise<void> };

export async function startRecordingDestination(): Promise<RecordingDestination> {
  const calls: RecordedCall[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      calls.push({ traceparent: request.headers.traceparent as string | undefined, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: `order-${calls.length}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
