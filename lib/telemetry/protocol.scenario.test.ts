/**
 * The OTLP protocol follows the standard variables, in a real process exporting to a real HTTP
 * server: protobuf bodies by default (the specification's default, what collectors expect when
 * nothing is said), JSON when OTEL_EXPORTER_OTLP_PROTOCOL or its traces-only variant asks for it,
 * and protobuf with a warning for gRPC, which is not shipped. The span is found in each body: its
 * name, and its trace id as raw bytes (protobuf) or hex (JSON).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";

type Export = { readonly contentType: string; readonly body: Buffer };
let server: http.Server;
let endpoint = "";
const exports: Export[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      exports.push({ contentType: request.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      response.writeHead(200, { "content-type": request.headers["content-type"] ?? "application/json" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** This process's environment without the OTEL_* variables, so each case says all of its own. */
function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = { ...env };
  for (const name of Object.keys(rest)) if (name.startsWith("OTEL_")) delete rest[name];
  return rest;
}

/** Runs the one-span process with `env`; resolves to its export and what it wrote on stderr. */
async function exportOnce(env: Record<string, string>): Promise<{ traceId: string; sent: Export; stderr: string }> {
  const traceId = randomBytes(16).toString("hex");
  const from = exports.length;
  const child = spawn(process.execPath, ["--import", "tsx", "lib/telemetry/test-export-once.ts", `00-${traceId}-${randomBytes(8).toString("hex")}-01`], {
    env: { ...withoutOtel(process.env), OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(code, stderr).toBe(0);
  const sent = exports.slice(from);
  expect(sent, "one export request").toHaveLength(1);
  return { traceId, sent: sent[0]!, stderr };
}

function expectProtobuf({ traceId, sent }: { traceId: string; sent: Export }): void {
  expect(sent.contentType).toBe("application/x-protobuf");
  expect(sent.body.includes(Buffer.from(traceId, "hex")), "the trace id's 16 bytes").toBe(true);
  expect(sent.body.includes(Buffer.from("fenceline.request")), "the span's name").toBe(true);
}

function expectJson({ traceId, sent }: { traceId: string; sent: Export }): void {
  expect(sent.contentType).toBe("application/json");
  const spans = (JSON.parse(sent.body.toString("utf8")) as { resourceSpans: { scopeSpans: { spans: { traceId: string; name: string }[] }[] }[] }).resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) => scope.spans),
  );
  expect(spans).toEqual([expect.objectContaining({ traceId, name: "fenceline.request" })]);
}

test("with no protocol named, spans go as protobuf over HTTP", async () => {
  expectProtobuf(await exportOnce({}));
});

test("http/protobuf and http/json are honoured, the traces-only variable first", async () => {
  expectProtobuf(await exportOnce({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" }));
  expectJson(await exportOnce({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }));
  expectJson(await exportOnce({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }));
});

test("gRPC, which is not shipped, exports protobuf over HTTP and says so", async () => {
  const grpc = await exportOnce({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_LOG_LEVEL: "warn" });
  expectProtobuf(grpc);
  expect(grpc.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL is "grpc", which Fenceline does not ship/);
});
