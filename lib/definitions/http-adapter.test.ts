/**
 * httpAdapter's classification table, row by row, against a real HTTP server on loopback that
 * answers each case: what an API said becomes what Fenceline may conclude (effect present,
 * nothing applied, wait without a lease, or outcome unknown), the request identity reaches the
 * API where the adapter says, and every row can be replaced.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DefiniteFailure, RateLimited, StaleTermRejected, UnknownOutcome } from "@/lib/adapters/call-outcome";
import type { AdapterCall, AdapterPromises } from "./adapter";
import { DefinitionError } from "./errors";
import { httpAdapter, retryAfterMs, type HttpAdapterOptions } from "./http-adapter";

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
const seen: Seen[] = [];
let server: http.Server;
let base: string;

/** Each path is one case of the table. */
const CASES: Record<string, (response: http.ServerResponse) => void> = {
  "/created": (r) => r.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "card_7", to: "Ada" })),
  "/replayed": (r) => r.writeHead(200, { "content-type": "application/json", "idempotent-replayed": "true" }).end(JSON.stringify({ id: "card_7" })),
  "/stale": (r) => r.writeHead(409, { "content-type": "application/problem+json" }).end(JSON.stringify({ title: "stale term", currentEpoch: "1", currentTerm: "7" })),
  "/conflict": (r) => r.writeHead(409, { "content-type": "application/json" }).end(JSON.stringify({ message: "order already closed" })),
  "/limited": (r) => r.writeHead(429, { "retry-after": "2" }).end(),
  "/limited-bare": (r) => r.writeHead(429).end(),
  "/unavailable-later": (r) => r.writeHead(503, { "retry-after": new Date(Date.now() + 30_000).toUTCString() }).end(),
  "/unavailable": (r) => r.writeHead(503).end("down"),
  "/invalid": (r) => r.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ detail: "to must be an email" })),
  "/missing": (r) => r.writeHead(404).end("no such list"),
  "/broken": (r) => r.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "boom" })),
  "/moved": (r) => r.writeHead(302, { location: "/created" }).end(),
  "/slow": (r) => void setTimeout(() => r.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "late" })), 1_500),
  "/dropped": (r) => r.socket?.destroy(),
  "/status/known": (r) => r.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ reference: "ref_1", state: "sent" })),
  "/status/unknown": (r) => r.writeHead(404).end(),
  "/status/broken": (r) => r.writeHead(500).end(),
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = CASES[new URL(request.url!, "http://x").pathname];
      if (answer) answer(response);
      else response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const IDEMPOTENT: AdapterPromises = { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" };

type Payload = { path: string; to?: string };

function adapter(overrides: Partial<HttpAdapterOptions<Payload>> = {}) {
  return httpAdapter<Payload>({
    name: "cards",
    version: "1",
    contract: IDEMPOTENT,
    timeoutMs: 500,
    concurrencyLimit: 4,
    request: { url: (call) => `${base}${call.payload.path}`, headers: { authorization: "Bearer k" }, body: (call) => ({ to: call.payload.to ?? "Ada" }) },
    ...overrides,
  });
}

let calls = 0;
function call(path: string, signal = new AbortController().signal): AdapterCall<Payload> {
  calls += 1;
  return { payload: { path }, requestIdentity: `identity-${calls}`, epoch: 1n, fencingTerm: 3n, signal, timeoutMs: 500 };
}

const refusalOf = (promise: Promise<unknown>) => promise.then((value) => ({ resolved: value }), (error: unknown) => error);
const lastSeen = () => seen.at(-1)!;

describe("the default table", () => {
  test("2xx is an effect with the reference the body names, sent with the identity as Idempotency-Key and the payload as JSON", async () => {
    const sent = call("/created");
    await expect(adapter().invoke(sent)).resolves.toEqual({ externalReference: "card_7", result: { id: "card_7", to: "Ada" }, replayed: false });
    expect(lastSeen()).toMatchObject({ method: "POST", body: JSON.stringify({ to: "Ada" }) });
    expect(lastSeen().headers).toMatchObject({ "idempotency-key": sent.requestIdentity, authorization: "Bearer k", "content-type": "application/json" });
  });

  test("a 2xx marked Idempotent-Replayed is a replay of the first answer", async () => {
    await expect(adapter().invoke(call("/replayed"))).resolves.toMatchObject({ externalReference: "card_7", replayed: true });
  });

  test("409 whose body names the term it holds is a stale term: nothing applied", async () => {
    const refusal = await refusalOf(adapter().invoke(call("/stale")));
    expect(refusal).toBeInstanceOf(StaleTermRejected);
    expect(refusal).toMatchObject({ currentEpoch: 1n, currentTerm: 7n });
  });

  test("409 without a stale term is a definite failure, with the API's own words", async () => {
    const refusal = await refusalOf(adapter().invoke(call("/conflict")));
    expect(refusal).toBeInstanceOf(DefiniteFailure);
    expect(refusal).toMatchObject({ status: 409, detail: "order already closed" });
  });

  test("429 and 503 with Retry-After wait (seconds or a date) without a lease; 429 without one waits a second", async () => {
    expect(await refusalOf(adapter().invoke(call("/limited")))).toMatchObject({ constructor: RateLimited, retryAfterMs: 2_000 });
    expect(await refusalOf(adapter().invoke(call("/limited-bare")))).toMatchObject({ constructor: RateLimited, retryAfterMs: 1_000 });
    const later = await refusalOf(adapter().invoke(call("/unavailable-later")));
    expect(later).toBeInstanceOf(RateLimited);
    expect((later as RateLimited).retryAfterMs).toBeGreaterThan(25_000);
    expect((later as RateLimited).retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  test("other 4xx are definite failures", async () => {
    expect(await refusalOf(adapter().invoke(call("/invalid")))).toMatchObject({ constructor: DefiniteFailure, status: 422, detail: "to must be an email" });
    expect(await refusalOf(adapter().invoke(call("/missing")))).toMatchObject({ constructor: DefiniteFailure, status: 404, detail: "no such list" });
  });

  test("5xx is an unknown outcome unless the API promises a 5xx applied nothing", async () => {
    expect(await refusalOf(adapter().invoke(call("/broken")))).toMatchObject({ constructor: UnknownOutcome, reason: "server error" });
    expect(await refusalOf(adapter().invoke(call("/unavailable")))).toMatchObject({ constructor: UnknownOutcome, reason: "server error" });
    const promised = adapter({ serverErrorsApplyNothing: true });
    expect(await refusalOf(promised.invoke(call("/broken")))).toMatchObject({ constructor: DefiniteFailure, status: 500, detail: "boom" });
  });

  test("a redirect is not followed: its outcome is unknown", async () => {
    const before = seen.length;
    expect(await refusalOf(adapter().invoke(call("/moved")))).toMatchObject({ constructor: UnknownOutcome, reason: "unreadable answer" });
    expect(seen.slice(before).map((entry) => entry.url)).toEqual(["/moved"]);
  });

  test("no answer within timeoutMs is an unknown outcome, though the request arrived", async () => {
    const sent = call("/slow");
    const started = Date.now();
    expect(await refusalOf(adapter().invoke(sent))).toMatchObject({ constructor: UnknownOutcome, reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(1_400);
    expect(lastSeen().headers["idempotency-key"]).toBe(sent.requestIdentity);
  });

  test("a connection dropped after the request was sent is an unknown outcome", async () => {
    expect(await refusalOf(adapter().invoke(call("/dropped")))).toMatchObject({ constructor: UnknownOutcome, reason: "connection lost" });
  });

  test("a refused connection sent nothing: a definite failure", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const nowhere = adapter({ request: { url: `http://127.0.0.1:${port}/cards` } });
    expect(await refusalOf(nowhere.invoke(call("/")))).toMatchObject({ constructor: DefiniteFailure, status: 0 });
  });

  test("the caller's signal fired before the call: nothing is sent", async () => {
    const controller = new AbortController();
    controller.abort(new Error("authority lost"));
    const before = seen.length;
    await expect(adapter().invoke(call("/created", controller.signal))).rejects.toThrow("authority lost");
    expect(seen.length).toBe(before);
  });

  test("the caller's signal fired mid-call: unknown, aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await refusalOf(adapter().invoke(call("/slow", controller.signal)))).toMatchObject({ constructor: UnknownOutcome, reason: "aborted" });
  });
});

describe("choices an adapter makes", () => {
  test("every row can be replaced: a 404 read as 'already removed', a 5xx as nothing applied", async () => {
    const removals = adapter({
      request: { method: "DELETE", url: (c) => `${base}${c.payload.path}` },
      classify: {
        clientError: (answer) => (answer.status === 404 ? { externalReference: null, result: "already removed" } : new DefiniteFailure("cards", answer.status, "refused")),
        serverError: (answer) => new DefiniteFailure("cards", answer.status, "the API rolls back"),
      },
    });
    await expect(removals.invoke(call("/missing"))).resolves.toEqual({ externalReference: null, result: "already removed" });
    expect(lastSeen()).toMatchObject({ method: "DELETE", body: JSON.stringify({ path: "/missing" }) });
    expect(await refusalOf(removals.invoke(call("/broken")))).toMatchObject({ constructor: DefiniteFailure, detail: "the API rolls back" });
    // Rows not replaced keep their default.
    expect(await refusalOf(removals.invoke(call("/limited")))).toBeInstanceOf(RateLimited);
  });

  test("the identity can travel as a query parameter, and the reference be read from elsewhere", async () => {
    const sent = call("/created");
    const referenced = adapter({ identity: { query: "client_reference" }, reference: (answer) => `to:${(answer.body as { to: string }).to}` });
    await expect(referenced.invoke(sent)).resolves.toMatchObject({ externalReference: "to:Ada" });
    expect(new URL(lastSeen().url, base).searchParams.get("client_reference")).toBe(sent.requestIdentity);
    expect(lastSeen().headers["idempotency-key"]).toBeUndefined();
  });

  test("a status query: 2xx applied with its reference, 404 not found, anything else unknown", async () => {
    const queryable = adapter({
      contract: { idempotencyKeys: false, statusQuery: true, fenceEnforcement: false, repetition: "reconcilable" },
      identity: { header: "Client-Reference" },
      status: { request: (identity) => `${base}/status/${identity}` },
    });
    expect(queryable.contract).toMatchObject({ statusQuery: true, operationClasses: ["create", "query"] });
    const ask = (identity: string) => queryable.query!({ requestIdentity: identity, signal: new AbortController().signal, timeoutMs: 500 });
    await expect(ask("known")).resolves.toEqual({ status: "applied", externalReference: "ref_1", result: { reference: "ref_1", state: "sent" } });
    await expect(ask("unknown")).resolves.toEqual({ status: "not_found", result: null });
    expect(await refusalOf(ask("broken"))).toMatchObject({ constructor: UnknownOutcome, reason: "server error" });
  });

  test("a definition that cannot work is refused, naming every problem", () => {
    const refusal = (() => {
      try {
        adapter({ contract: { ...IDEMPOTENT, statusQuery: true }, identity: { header: "bad header" }, request: { url: "not a url" } });
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(DefinitionError);
    expect((refusal as DefinitionError).problems).toEqual([
      'identity must name a header or query parameter, got "bad header"',
      "contract.statusQuery is true, so status (how to ask about an identity) is required",
      'request.url is not a URL: "not a url"',
    ]);
  });

  test("Retry-After reads delta-seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3_000);
    expect(retryAfterMs("Tue, 01 Dec 2026 12:00:10 GMT", now)).toBe(10_000);
    expect(retryAfterMs("Tue, 01 Dec 2026 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
