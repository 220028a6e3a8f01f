/**
 * The web app as `npm start` runs it (lib/cli/start.ts: a built app under `next start`), read
 * from outside over HTTP, because what is tested here happens in Next itself, before any route
 * handler: proxy.ts setting the security headers, and Next decoding the path.
 *
 * - Every kind of response (a page, a route handler, the worker protocol, a static asset)
 *   carries the security headers, with a page's script nonce fresh per request.
 * - A path segment that is not valid percent-encoding is a 400 problem on /api and the
 *   not-found page elsewhere.
 * - No path, query string or header a client can send (malformed, overlong or odd unicode,
 *   signed in or not) answers 5xx, and every refusal on /api is problem+json. The routes come
 *   from the OpenAPI document and the app/ tree, so a new route is covered without a change here.
 */
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePortRun } from "@/lib/net/free-port";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";

const DEMO_PASSWORD = "proxy-scenario-password-0123";
// https, so the app must send HSTS; nothing here needs the URL to answer.
const PUBLIC_URL = "https://fenceline.example";
const BUILD_AND_START_TIMEOUT_MS = 300_000;
const FUZZ_RUNS = 300;
const APP_DIR = path.join(process.cwd(), "app");

// The issue's own examples, and their kin: truncated, non-hex, invalid or overlong UTF-8.
const UNREADABLE_SEGMENTS = ["abc%2", "%", "%zz", "%E0%A4%A", "%ED%A0%80", "%C0%AF", "%FF", "ok%2Fthen%"];

let app: Spawned;
let port: number;
// What Next logs with ⨯: a page that failed while rendering, even inside a response already
// sent as 200 (a streamed page shows its error boundary then).
const renderErrors: string[] = [];

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** node:http, not fetch: the path goes out byte for byte as written, and any header may be set. */
function send(method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method, path: target, headers: body === undefined ? headers : { "content-length": Buffer.byteLength(body), ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

beforeAll(async () => {
  // Below the ephemeral range: the destination service binds port 0 after we let go of ours,
  // and the kernel could hand it the same one.
  port = await freePortRun();
  app = spawnNodeProcess("npm-start", "lib/cli/start.ts", {
    PORT: String(port),
    FENCELINE_DATABASE: "proxy_scenario",
    FENCELINE_FRESH_DATABASE: "1",
    FENCELINE_PUBLIC_URL: PUBLIC_URL,
    FENCELINE_DEMO: "sign-ins",
    FENCELINE_WORKERS: "0",
    DESTINATION_PORT: "0",
    FENCELINE_DEMO_PASSWORD: DEMO_PASSWORD,
  });
  createInterface({ input: app.process.stderr! }).on("line", (line) => {
    if (line.includes("⨯")) renderErrors.push(line);
  });
  await app.waitForLine(/the dashboard is ready at/, BUILD_AND_START_TIMEOUT_MS);
}, BUILD_AND_START_TIMEOUT_MS);

afterAll(async () => {
  if (app?.alive) app.process.kill("SIGTERM");
  await app?.exited;
});

// ---- the headers ------------------------------------------------------------------------------

function policy(answer: Answer): Map<string, string[]> {
  const header = answer.headers["content-security-policy"];
  expect(header, "content-security-policy").toBeTypeOf("string");
  return new Map(
    String(header)
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter((tokens) => tokens[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

function expectCommonHeaders(answer: Answer, kind: string): void {
  expect(answer.headers["x-content-type-options"], kind).toBe("nosniff");
  expect(answer.headers["strict-transport-security"], kind).toMatch(/^max-age=\d{7,}/);
  expect(answer.headers["permissions-policy"], kind).toMatch(/\bcamera=\(\)/);
  expect(answer.headers["permissions-policy"], kind).toMatch(/\bmicrophone=\(\)/);
  expect(answer.headers["permissions-policy"], kind).toMatch(/\bgeolocation=\(\)/);
  expect(answer.headers["x-powered-by"], kind).toBeUndefined();
  expect(answer.headers["content-security-policy-report-only"], kind).toBeUndefined();
  const directives = policy(answer);
  expect(directives.get("frame-ancestors"), kind).toEqual(["'none'"]);
  expect(directives.get("base-uri"), kind).toEqual(["'none'"]);
  expect(directives.get("upgrade-insecure-requests"), kind).toEqual([]);
}

/** A non-document answer allows nothing to load or run. */
function expectNothingAllowed(answer: Answer, kind: string): void {
  expectCommonHeaders(answer, kind);
  expect(policy(answer).get("default-src"), kind).toEqual(["'none'"]);
  expect(answer.headers["referrer-policy"], kind).toBe("strict-origin-when-cross-origin");
}

function nonceOf(answer: Answer): string {
  const scriptSources = policy(answer).get("script-src") ?? [];
  const nonces = scriptSources.filter((source) => source.startsWith("'nonce-"));
  expect(nonces).toHaveLength(1);
  return nonces[0]!.slice("'nonce-".length, -1);
}

describe("security headers", () => {
  test("a page's policy allows only scripts with this response's nonce, and what they load", async () => {
    const first = await send("GET", "/login");
    const second = await send("GET", "/login");
    expect(first.status).toBe(200);
    expectCommonHeaders(first, "page");
    expect(first.headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    const directives = policy(first);
    expect(directives.get("default-src")).toEqual(["'self'"]);
    expect(directives.get("script-src")).toContain("'strict-dynamic'");
    expect(directives.get("script-src")).not.toContain("'unsafe-eval'");
    expect(directives.get("script-src")).not.toContain("'unsafe-inline'");
    expect(directives.get("style-src")).not.toContain("'unsafe-inline'");
    expect(directives.get("object-src")).toEqual(["'none'"]);
    expect(directives.get("form-action")).toEqual(["'self'"]);
    expect(directives.get("connect-src")).toEqual(["'self'"]);

    const nonce = nonceOf(first);
    expect(nonce.length).toBeGreaterThanOrEqual(16);
    expect(nonceOf(second)).not.toBe(nonce);
    const scripts = [...first.body.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect(script).toContain(`nonce="${nonce}"`);
  });

  test("a route handler, the worker protocol and a static asset carry the headers, with a policy that allows nothing", async () => {
    const openApi = JSON.parse((await send("GET", "/api/openapi.json")).body) as { paths: Record<string, unknown> };
    const workerOperation = Object.keys(openApi.paths).find((template) => template.startsWith("/api/worker/"));
    expect(workerOperation).toBeDefined();
    const login = await send("GET", "/login");
    const asset = /<script\b[^>]*\bsrc="(\/_next\/static\/[^"]+\.js)"/.exec(login.body)?.[1];
    expect(asset).toBeDefined();

    const answers = {
      "route handler": await send("GET", "/api/health"),
      "worker protocol": await send("POST", workerOperation!, { "content-type": "application/json" }, "{}"),
      "static asset": await send("GET", asset!),
    };
    expect(answers["route handler"].status).toBe(200);
    // No worker token: refused, and the refusal carries the headers too.
    expect(answers["worker protocol"].status).toBe(401);
    expect(answers["static asset"].status).toBe(200);
    for (const [kind, answer] of Object.entries(answers)) expectNothingAllowed(answer, kind);
  });

  test("the tracking page and its API send no referrer, since their URL is the end user's key", async () => {
    for (const target of ["/track/not-a-token", "/api/track/not-a-token"]) {
      const answer = await send("GET", target);
      expect(answer.status, target).toBe(404);
      expectCommonHeaders(answer, target);
      expect(answer.headers["referrer-policy"], target).toBe("no-referrer");
    }
  });
});

// ---- the routes -------------------------------------------------------------------------------

type Segment = { readonly literal: string } | { readonly dynamic: string };
type Route = { readonly template: string; readonly segments: readonly Segment[]; readonly methods: readonly string[]; readonly api: boolean };

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Every page and route handler under app/, as Next routes them: (groups) vanish, [name] is dynamic. */
function appRoutes(directory = APP_DIR, segments: Segment[] = []): Route[] {
  const entries = readdirSync(directory, { withFileTypes: true });
  const here: Route[] = [];
  for (const entry of entries.filter((candidate) => candidate.isFile())) {
    if (/^page\.tsx?$/.test(entry.name)) here.push(route(segments, ["GET"]));
    if (/^route\.ts$/.test(entry.name)) {
      const source = readFileSync(path.join(directory, entry.name), "utf8");
      here.push(route(segments, METHODS.filter((method) => new RegExp(`export (const|async function|function) ${method}\\b`).test(source))));
    }
  }
  const below = entries
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const name = entry.name;
      if (/^\(.*\)$/.test(name)) return appRoutes(path.join(directory, name), segments);
      // [name], and the catch-alls [...name] and [[...name]], all take one segment here.
      const dynamic = /^\[{1,2}(?:\.\.\.)?(\w+)\]{1,2}$/.exec(name);
      return appRoutes(path.join(directory, name), [...segments, dynamic ? { dynamic: dynamic[1]! } : { literal: name }]);
    });
  return [...here, ...below];
}

function route(segments: readonly Segment[], methods: readonly string[]): Route {
  const template = `/${segments.map((segment) => ("literal" in segment ? segment.literal : `{${segment.dynamic}}`)).join("/")}`;
  return { template, segments, methods, api: template === "/api" || template.startsWith("/api/") };
}

/** The OpenAPI document's paths, which name the worker protocol's operations one by one. */
function openApiRoutes(document: { paths: Record<string, Record<string, unknown>> }): Route[] {
  return Object.entries(document.paths).map(([template, operations]) =>
    route(
      template
        .split("/")
        .filter(Boolean)
        .map((segment) => (/^\{(\w+)\}$/.test(segment) ? { dynamic: segment.slice(1, -1) } : { literal: segment })),
      Object.keys(operations).map((method) => method.toUpperCase()),
    ),
  );
}

let routes: Route[] = [];

beforeAll(async () => {
  const document = JSON.parse((await send("GET", "/api/openapi.json")).body) as { paths: Record<string, Record<string, unknown>> };
  const byTemplate = new Map<string, Route>();
  for (const found of [...appRoutes(), ...openApiRoutes(document)]) {
    const known = byTemplate.get(found.template);
    byTemplate.set(found.template, known ? { ...known, methods: [...new Set([...known.methods, ...found.methods])] } : found);
  }
  routes = [...byTemplate.values()].filter((candidate) => candidate.methods.length > 0);
});

// ---- what every answer must be ----------------------------------------------------------------

function expectAnswered(answer: Answer, api: boolean, what: string): void {
  expect(answer.status, `${what} answered ${answer.status}: ${answer.body.slice(0, 300)}`).toBeLessThan(500);
  // Next normalises the URL (repeated or trailing slashes, `..`) with a 308 before proxy.ts
  // runs, so that redirect alone goes without the headers; it carries a Location and nothing else.
  if (answer.status === 308) {
    expect(answer.headers.location, what).toBeDefined();
    return;
  }
  expect(answer.headers["x-content-type-options"], `${what}: headers`).toBe("nosniff");
  expect(policy(answer).get("frame-ancestors"), `${what}: headers`).toEqual(["'none'"]);
  if (!api || answer.status < 400) return;
  expect(answer.headers["content-type"], `${what} answered ${answer.status} without a problem: ${answer.body.slice(0, 300)}`).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem, what).toMatchObject({ code: expect.any(String), title: expect.any(String), status: answer.status, detail: expect.any(String) });
  expect(problem.type, what).toBe(`urn:fenceline:problem:${String(problem.code)}`);
}

const pathOf = (target: Route, values: readonly string[]) => {
  let next = 0;
  return `/${target.segments.map((segment) => ("literal" in segment ? segment.literal : values[next++] ?? "x")).join("/")}`;
};

const dynamicCount = (target: Route) => target.segments.filter((segment) => "dynamic" in segment).length;

describe("malformed input", () => {
  test("an unreadable path segment is a 400 problem on /api and the not-found page elsewhere", async () => {
    const notFound = await send("GET", "/no-such-page");
    expect(notFound.status).toBe(404);
    const withDynamicSegments = routes.filter((candidate) => dynamicCount(candidate) > 0);
    expect(withDynamicSegments.some((candidate) => candidate.api)).toBe(true);
    expect(withDynamicSegments.some((candidate) => !candidate.api)).toBe(true);
    for (const target of withDynamicSegments) {
      for (let index = 0; index < dynamicCount(target); index += 1) {
        for (const unreadable of UNREADABLE_SEGMENTS) {
          const values = Array.from({ length: dynamicCount(target) }, (_, at) => (at === index ? unreadable : "x"));
          const requestPath = pathOf(target, values);
          for (const method of target.methods) {
            const answer = await send(method, requestPath, { "content-type": "application/json" }, method === "GET" ? undefined : "{}");
            const what = `${method} ${requestPath}`;
            expectAnswered(answer, target.api, what);
            if (target.api) {
              expect(answer.status, what).toBe(400);
              expect(JSON.parse(answer.body), what).toMatchObject({ code: "unreadable-path", detail: expect.stringContaining(unreadable.slice(0, 8)) });
            } else {
              expect(answer.status, what).toBe(404);
              expect(answer.body.includes("Page not found"), `${what}: the not-found page`).toBe(true);
            }
          }
        }
      }
    }
    expect(renderErrors, "the server logged render errors").toEqual([]);
  });

  // PostgreSQL cannot store U+0000: a NUL that reached a statement was a 500 (found by the fuzz
  // below, on a wait's one-time URL). Every route, every place a NUL can ride in.
  test("a NUL character in a path segment or a query value is refused on every route, never a 5xx", { timeout: 120_000 }, async () => {
    for (const target of routes) {
      const places = [
        ...Array.from({ length: dynamicCount(target) }, (_, index) => pathOf(target, Array.from({ length: dynamicCount(target) }, (_, at) => (at === index ? "a%00b" : "x")))),
        `${pathOf(target, [])}?cursor=%00&q=a%00b&state=%00`,
      ];
      for (const requestPath of places) {
        for (const method of target.methods) {
          const answer = await send(method, requestPath, { "content-type": "application/json" }, method === "GET" ? undefined : "{}");
          expectAnswered(answer, target.api, `${method} ${requestPath}`);
        }
      }
    }
    expect(renderErrors, "the server logged render errors").toEqual([]);
  });

  test("no path, query string or header answers 5xx, and every refusal on /api is a problem", { timeout: 240_000 }, async () => {
    const roles = ["support", "engineer", "admin"] as const;
    const sessions = new Map<string, string>();
    let signIns = 0;
    const cookieFor = async (role: (typeof roles)[number]): Promise<string> => {
      const known = sessions.get(role);
      if (known) return known;
      // A client address of its own per sign-in, so the sign-in rate limit does not end the run.
      signIns += 1;
      const answer = await send("POST", "/api/session", { "content-type": "application/json", "x-forwarded-for": `198.51.100.${signIns % 250}` }, JSON.stringify({ email: `${role}@fenceline.test`, password: DEMO_PASSWORD }));
      expect(answer.status, answer.body).toBe(200);
      const cookie = (answer.headers["set-cookie"] ?? []).map((header) => header.split(";")[0]).join("; ");
      sessions.set(role, cookie);
      return cookie;
    };

    const percentEncoded = (text: string) => [...Buffer.from(text, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");
    const rawBytes = fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => [...bytes].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join(""));
    const segment = fc.oneof(
      fc.constantFrom(...UNREADABLE_SEGMENTS),
      rawBytes,
      fc.string({ unit: "binary", minLength: 1, maxLength: 30 }).map(percentEncoded),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).map(encodeURIComponent),
      fc.constantFrom("..", "%2e%2e", "%2F", "%00", "%5C", ";", "%3B", "%20", "%0A", "%EF%BB%BF", "%E2%80%AE", "%F0%9F%98%80", "~", "!$&'()*+,=@:"),
      fc.uuid(),
    );
    // Overlong, yet inside the 16 KB Node itself allows a request line and headers (it answers 431 beyond).
    const overlong = fc.integer({ min: 300, max: 2_000 }).map((length) => "a".repeat(length));
    const pathSegment = fc.oneof(segment, overlong);
    const queryText = fc.oneof(segment, fc.constantFrom("", "=", "&", "%", "__proto__", "constructor"));
    const query = fc.array(fc.tuple(fc.oneof(queryText, fc.constantFrom("cursor", "limit", "q", "state", "from", "to", "before")), queryText), { maxLength: 3 });
    // Header values as HTTP carries them: visible ASCII and Latin-1.
    const headerText = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 60 }),
      fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)), minLength: 1, maxLength: 20 }),
      fc.constantFrom("%zz", "[[[", "{\"a\":", "1", "../..", "x".repeat(1_500)),
    );
    const headerNames = ["cookie", "authorization", "content-type", "accept", "accept-language", "origin", "referer", "host", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "if-none-match", "range", "rsc", "next-router-state-tree", "next-router-prefetch", "next-router-segment-prefetch", "next-url", "next-action", "x-middleware-subrequest", "idempotency-key"];
    const headers = fc.dictionary(fc.constantFrom(...headerNames), headerText, { maxKeys: 4 });

    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((target) =>
          fc.record({
            target: fc.constant(target),
            method: fc.constantFrom(...target.methods),
            values: fc.array(pathSegment, { minLength: dynamicCount(target), maxLength: dynamicCount(target) }),
            query,
            headers,
            identity: fc.constantFrom("anonymous", ...roles),
          }),
        ),
        async ({ target, method, values, query: pairs, headers: extra, identity }) => {
          const search = pairs.length ? `?${pairs.map(([key, value]) => `${key}=${value}`).join("&")}` : "";
          const requestPath = `${pathOf(target, values)}${search}`;
          const cookie = identity === "anonymous" ? undefined : await cookieFor(identity);
          const sent = { "content-type": "application/json", ...(cookie ? { cookie } : {}), ...extra };
          const answer = await send(method, requestPath, sent, method === "GET" ? undefined : "{}");
          requests += 1;
          // A sign-out (or any new cookie) ends the session this identity used: sign in again next time.
          if (identity !== "anonymous" && answer.headers["set-cookie"]) sessions.delete(identity);
          expectAnswered(answer, target.api, `${method} ${requestPath.slice(0, 200)} as ${identity} with ${JSON.stringify(extra).slice(0, 200)}`);
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    expect(requests).toBe(FUZZ_RUNS);
    expect(renderErrors, "the server logged render errors").toEqual([]);
  });
});
