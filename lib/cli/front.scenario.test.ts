/**
 * The front door `npm start` puts on PORT while the dashboard builds (lib/cli/front.ts), as real
 * processes: before any dashboard answers, an HTTP worker registers and works through it and an
 * app creates a request through it that Completes; what only the dashboard serves is a 503 that
 * says so. Then a stand-in for the built dashboard starts on its port, and from then on every
 * request (method, path, headers, body, status, cookies) passes through unchanged.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createClient } from "fenceline/client";
import { installAppKey } from "@/lib/auth/app-keys";
import { installWorkerToken } from "@/lib/auth/worker-tokens";
import { freshDatabase, type TestDatabase } from "@/lib/db/test-database";
import { freePort } from "@/lib/net/free-port";
import { createFastClass } from "@/lib/worker/test-definitions";
import { spawnNodeProcess, spawnWorker, stopAll, type Spawned } from "@/lib/worker/test-process";

let db: TestDatabase;
let front: Spawned;
let worker: Spawned;
let dashboard: Server | undefined;
let url: string;
let dashboardPort: number;
const token = randomBytes(24).toString("base64url");
const appKey = `fl_app_${randomBytes(24).toString("base64url")}`;

beforeAll(async () => {
  db = await freshDatabase();
  await createFastClass(db.pool);
  await installWorkerToken(db.pool, "front-test-workers", token, "test");
  await installAppKey(db.pool, "front-test", appKey, ["requests:create", "requests:read", "events:send"], "test");
  const port = await freePort();
  dashboardPort = await freePort();
  url = `http://127.0.0.1:${port}`;
  front = spawnNodeProcess("front", "lib/cli/front.ts", {
    DATABASE_URL: db.url,
    PORT: String(port),
    FENCELINE_DASHBOARD_PORT: String(dashboardPort),
    FENCELINE_DEMO: "off",
    FENCELINE_PUBLIC_URL: url,
  });
  await front.waitForLine(/^FENCELINE_FRONT_READY /);
  // Over HTTP, with no database URL: everything it does goes through the front door.
  worker = spawnWorker("", { FENCELINE_WORKER_TRANSPORT: "http", FENCELINE_COORDINATOR_URL: url, FENCELINE_WORKER_TOKEN: token });
  await worker.waitForLine(/^FENCELINE_WORKER_READY /);
}, 60_000);

afterAll(async () => {
  await stopAll([worker, front].filter(Boolean));
  await new Promise((resolve) => (dashboard ? dashboard.close(resolve) : resolve(undefined)));
  await db?.drop();
});

test("before the dashboard is built, a request is created, worked over HTTP and Completed through the front door", async () => {
  const client = createClient({ url, apiKey: appKey });
  const created = await client.requests.create("process-two", { ms: 10 }, { idempotencyKey: "front-1" });
  const ended = await client.requests.waitForEnd(created.id, { timeoutMs: 20_000 });
  expect(ended.status).toBe("completed");
  expect((await client.requests.list({ limit: 10 })).items.map((item) => item.id)).toContain(created.id);

  const tracked = await fetch(`${url}/api/track/${created.trackingToken}`);
  expect(tracked.status).toBe(200);
  // The headers every answer of the web app carries.
  expect(tracked.headers.get("content-security-policy")).toContain("default-src 'none'");
  expect(tracked.headers.get("referrer-policy")).toBe("no-referrer");
  expect((await fetch(`${url}/api/health`)).status).toBe(200);
  expect(((await (await fetch(`${url}/api/openapi.json`)).json()) as { openapi: string }).openapi).toMatch(/^3\./);
});

test("before the dashboard is built, bad input is still a 4xx problem, and the dashboard's pages say they are building", async () => {
  const refused = await fetch(`${url}/api/requests`, { method: "POST", headers: { authorization: `Bearer ${appKey}`, "content-type": "text/plain" }, body: "hello" });
  expect(refused.status).toBe(415);
  const unknown = await fetch(`${url}/api/requests/not-a-uuid`, { headers: { authorization: `Bearer ${appKey}` } });
  expect([unknown.status, unknown.headers.get("content-type")]).toEqual([404, "application/problem+json"]);
  expect(await fetch(`${url}/api/requests`, { method: "DELETE" }).then((answer) => answer.status)).toBe(405);
  expect(await fetch(`${url}/api/track/abc%2`).then((answer) => answer.status)).toBe(400);
  // The events API answers too: a name no registered step waits for is refused, naming the field.
  const event = await fetch(`${url}/api/events`, { method: "POST", headers: { authorization: `Bearer ${appKey}`, "content-type": "application/json" }, body: JSON.stringify({ name: "nobody.waits", key: "k", payload: null }) });
  expect([event.status, event.headers.get("content-type")]).toEqual([422, "application/problem+json"]);
  expect(JSON.stringify(await event.json())).toContain("name");
  expect((await fetch(`${url}/api/events/url/not-a-token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(410);

  const page = await fetch(`${url}/requests`);
  expect(page.status).toBe(503);
  expect(page.headers.get("retry-after")).toBe("5");
  expect(await page.text()).toContain("The dashboard is building");
  const api = await fetch(`${url}/api/steps`);
  expect(api.status).toBe(503);
  expect(api.headers.get("content-type")).toContain("application/problem+json");
  expect(((await api.json()) as { code: string }).code).toBe("dashboard-starting");
});

test("once the dashboard answers, every request passes through to it unchanged", async () => {
  const seen: { method: string; url: string; custom: string | undefined; body: string }[] = [];
  dashboard = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      if (request.url === "/api/health") return void response.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      seen.push({ method: request.method!, url: request.url!, custom: request.headers["x-custom"] as string | undefined, body });
      response.writeHead(418, { "set-cookie": ["a=1; Path=/", "b=2; Path=/"], "x-from": "dashboard" });
      // Streamed in two parts, as a server component's answer is.
      response.write("part one, ");
      setTimeout(() => response.end("part two"), 50);
    });
  });
  await new Promise<void>((resolve) => dashboard!.listen(dashboardPort, "127.0.0.1", resolve));
  await front.waitForLine(/^FENCELINE_DASHBOARD_READY /, 10_000);

  const answer = await fetch(`${url}/requests?status=active`, { method: "POST", headers: { "x-custom": "kept" }, body: "form=1" });
  expect(answer.status).toBe(418);
  expect(answer.headers.get("x-from")).toBe("dashboard");
  expect(answer.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
  expect(await answer.text()).toBe("part one, part two");
  // The running worker's protocol calls go to the dashboard now too.
  expect(seen.filter((request) => !request.url.startsWith("/api/worker/"))).toEqual([{ method: "POST", url: "/requests?status=active", custom: "kept", body: "form=1" }]);
  const protocol = await fetch(`${url}/api/worker/heartbeat`, { method: "POST" });
  expect(protocol.status).toBe(418);
});
