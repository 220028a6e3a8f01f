/**
 * The web app's front door on PORT while `npm start` builds the dashboard: started by
 * lib/cli/start.ts when a `next build` is needed, so an adopter can start requests and run workers
 * at once instead of waiting for the build.
 *
 * Until the dashboard answers on FENCELINE_DASHBOARD_PORT it serves, itself, what an adopter needs
 * first, with the very route handlers the web app uses (app/api/…/route.ts): the requests API
 * (create, read, list, cancel), events (an app's send, a wait's one-time URL), tracking reads,
 * the worker protocol, /api/health and /api/openapi.json. Anything else is a 503 that says the dashboard is building (a page that
 * reloads itself, or a problem+json under /api). Once the dashboard's /api/health answers, every
 * request is passed to it unchanged, for as long as this run lasts.
 *
 * Environment (set by npm start): PORT, FENCELINE_DASHBOARD_PORT, DATABASE_URL, and what the web
 * app reads (FENCELINE_DEMO, FENCELINE_PUBLIC_URL, FENCELINE_DESTINATION_URL…). Prints
 * `FENCELINE_FRONT_READY <url>` once it listens. Stops on SIGTERM or SIGINT.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { problem } from "@/lib/api/problems";
import { closeWorkerProtocol, workerProtocolListener } from "@/lib/api/worker-protocol";
import { pool } from "@/lib/db/pool";
import { integerFromEnv } from "@/lib/env";
import { describeUnreadableSegment, unreadableSegment } from "@/lib/web/readable-path";
import { securityHeaders } from "@/lib/web/security-headers";

type RouteModule = Partial<Record<"GET" | "POST" | "OPTIONS", (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>>>;

/** A route file's exports, called as Next calls them (GET with the request and its params). */
const asRoute = (module: object) => module as RouteModule;

/** What is served before the dashboard is built: the adopter's first needs, by their own handlers. */
const EARLY_ROUTES: { path: RegExp; load: () => Promise<RouteModule> }[] = [
  { path: /^\/api\/health$/, load: () => import("@/app/api/health/route").then(asRoute) },
  { path: /^\/api\/openapi\.json$/, load: () => import("@/app/api/openapi.json/route").then(asRoute) },
  { path: /^\/api\/requests$/, load: () => import("@/app/api/requests/route").then(asRoute) },
  { path: /^\/api\/requests\/(?<id>[^/]+)$/, load: () => import("@/app/api/requests/[id]/route").then(asRoute) },
  { path: /^\/api\/requests\/(?<id>[^/]+)\/cancel$/, load: () => import("@/app/api/requests/[id]/cancel/route").then(asRoute) },
  { path: /^\/api\/track\/(?<token>[^/]+)$/, load: () => import("@/app/api/track/[token]/route").then(asRoute) },
  // A request that waits for an event goes on only when the event arrives.
  { path: /^\/api\/events$/, load: () => import("@/app/api/events/route").then(asRoute) },
  { path: /^\/api\/events\/url\/(?<token>[^/]+)$/, load: () => import("@/app/api/events/url/[token]/route").then(asRoute) },
];
const WORKER_PROTOCOL = /^\/api\/worker\//;
const DASHBOARD_POLL_MS = 500;

const port = integerFromEnv("PORT", 3000, { max: 65_535 });
const dashboardPort = integerFromEnv("FENCELINE_DASHBOARD_PORT", 0, { min: 1, max: 65_535 });
const publicUrl = process.env.FENCELINE_PUBLIC_URL || `http://127.0.0.1:${port}`;
const workerProtocol = workerProtocolListener(pool());
let dashboardReady = false;

const server = createServer({ keepAliveTimeout: 65_000 }, (incoming, outgoing) => {
  if (dashboardReady) return passToDashboard(incoming, outgoing);
  const pathname = (incoming.url ?? "/").split("?")[0]!;
  if (WORKER_PROTOCOL.test(pathname)) return workerProtocol(incoming, outgoing);
  void answerEarly(incoming, pathname).then(
    (response) => send(pathname, response, outgoing),
    (error: unknown) => send(pathname, problem("internal-error", "the front door failed to answer"), outgoing, error),
  );
});

async function answerEarly(incoming: IncomingMessage, pathname: string): Promise<Response> {
  const unreadable = unreadableSegment(pathname);
  if (unreadable !== undefined) return pathname.startsWith("/api") ? problem("unreadable-path", describeUnreadableSegment(unreadable)) : building(pathname);
  for (const route of EARLY_ROUTES) {
    const match = route.path.exec(pathname);
    if (!match) continue;
    const method = incoming.method === "HEAD" ? "GET" : ((incoming.method ?? "GET") as "GET");
    const handler = (await route.load())[method];
    if (!handler) return problem("method-not-allowed", `${incoming.method} is not allowed on ${pathname}`);
    const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([name, value]) => [name, decodeURIComponent(value)]));
    return handler(toRequest(incoming), { params: Promise.resolve(params) });
  }
  return building(pathname);
}

/** The 503 for what only the built dashboard serves. */
function building(pathname: string): Response {
  const detail = "the dashboard is still building (next build); the requests and events API and the worker protocol already answer";
  if (pathname.startsWith("/api")) return problem("dashboard-starting", detail, {}, { "retry-after": "5" });
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5"><title>Fenceline is starting</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5"><h1>The dashboard is building</h1>
<p>npm start is building the dashboard (next build). The requests API and the worker protocol already answer, so your worker and your requests can start now. This page reloads itself every 5 seconds.</p></body></html>`;
  return new Response(page, { status: 503, headers: { "content-type": "text/html; charset=utf-8", "retry-after": "5", "cache-control": "no-store" } });
}

function toRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  const method = incoming.method === "HEAD" ? "GET" : (incoming.method ?? "GET");
  const body = method === "GET" ? undefined : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>);
  return new Request(new URL(incoming.url ?? "/", publicUrl), { method, headers, body, duplex: "half" } as RequestInit);
}

/** Writes a handler's Response with the headers every answer of the web app carries (proxy.ts). */
async function send(pathname: string, response: Response, outgoing: ServerResponse, error?: unknown): Promise<void> {
  if (error) process.stderr.write(`front: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  Object.assign(headers, securityHeaders(pathname, { development: false, publicUrl: process.env.FENCELINE_PUBLIC_URL }));
  outgoing.writeHead(response.status, headers);
  if (!response.body) return void outgoing.end();
  Readable.fromWeb(response.body as import("node:stream/web").ReadableStream).pipe(outgoing);
}

/** Once built, the dashboard (`next start` on FENCELINE_DASHBOARD_PORT) answers everything. */
function passToDashboard(incoming: IncomingMessage, outgoing: ServerResponse): void {
  const upstream = httpRequest(
    { host: "127.0.0.1", port: dashboardPort, method: incoming.method, path: incoming.url, headers: incoming.headers as IncomingHttpHeaders },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(outgoing);
    },
  );
  upstream.on("error", () => {
    if (!outgoing.headersSent) send((incoming.url ?? "/").split("?")[0]!, problem("internal-error", "the dashboard did not answer"), outgoing);
    else outgoing.destroy();
  });
  // A client that goes away (a long poll given up) ends the dashboard's side too.
  outgoing.on("close", () => upstream.destroy());
  incoming.pipe(upstream);
}

async function watchDashboard(): Promise<void> {
  while (!stopping) {
    const answer = await fetch(`http://127.0.0.1:${dashboardPort}/api/health`).catch(() => undefined);
    if (answer?.ok) {
      dashboardReady = true;
      process.stdout.write(`FENCELINE_DASHBOARD_READY ${publicUrl}\n`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, DASHBOARD_POLL_MS));
  }
}

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await closeWorkerProtocol(pool());
  await pool().end();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());

// Loaded before the ready line, not on the first request: loading the handlers' modules takes
// seconds on a busy machine, and a client's first call should not wait for it.
await Promise.all(EARLY_ROUTES.map((route) => route.load()));
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
process.stdout.write(`FENCELINE_FRONT_READY ${publicUrl}\n`);
void watchDashboard();
