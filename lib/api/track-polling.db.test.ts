/**
 * GET /api/track/<token> is cheap to poll and readable from the origins an admin allows: every
 * answer carries an ETag, an unchanged view is a bodiless 304 and a changed one a new tag;
 * Cache-Control lets a browser keep the view but ask again while it may change; an allowed
 * origin gets CORS headers (never credentials) on answers, refusals and preflights alike, and
 * any other origin gets none.
 */
import { afterAll, beforeEach, describe, expect } from "vitest";
import { createClient, type FencelineClient } from "fenceline/client";
import { GET, OPTIONS } from "@/app/api/track/[token]/route";
import { createAppKey } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import type { DeliveryWorkflow } from "@/lib/demo/workflow";
import { registerDelivery, routeFetch } from "@/lib/requests/test-support";
import { matchesIfNoneMatch, etagOf } from "./conditional";

const BASE = "http://fenceline.test";
const SHOP = "https://shop.example";

afterAll(async () => {
  await pool().end();
});

let client: FencelineClient;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    await registerDelivery(db.pool);
    client = createClient({ url: BASE, apiKey: (await createAppKey(db.pool, "shop", ["requests:create", "requests:read"], "admin@test")).key, fetch: routeFetch });
  })());

beforeEach(() => {
  process.env.FENCELINE_TRACK_ORIGINS = `${SHOP}, http://127.0.0.1:5173`;
});

const track = (token: string, headers: Record<string, string> = {}) => GET(new Request(`${BASE}/api/track/${token}`, { headers }), { params: Promise.resolve({ token }) });
const preflight = (token: string, headers: Record<string, string>) => OPTIONS(new Request(`${BASE}/api/track/${token}`, { method: "OPTIONS", headers }), { params: Promise.resolve({ token }) });
const newRequest = () => client.requests.create<DeliveryWorkflow>("delivery", { recipient: "ada@example.test", message: "hi" });

describe("polling", () => {
  test("an unchanged view is a bodiless 304 for its ETag; a changed one is a 200 with a new tag", async ({ db }) => {
    await prepare(db);
    const created = await newRequest();
    const first = await track(created.trackingToken);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    const body = await first.text();
    expect(etag).toBe(etagOf(body));
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    expect(first.headers.get("content-type")).toBe("application/json");

    const again = await track(created.trackingToken, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);

    await client.requests.cancel(created.id, { reason: "changed my mind" });
    const ended = await track(created.trackingToken, { "if-none-match": etag });
    expect(ended.status).toBe(200);
    expect(ended.headers.get("etag")).not.toBe(etag);
    expect((await ended.json()) as { terminal: boolean }).toMatchObject({ terminal: true, headline: { state: "cancelled" } });
    // Nothing more will change: a browser may keep it a while without asking.
    expect(ended.headers.get("cache-control")).toBe("private, max-age=300");
  });

  test("If-None-Match matches by the weak comparison, a list, or *", () => {
    const tag = '"abc"';
    expect(matchesIfNoneMatch('"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('W/"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('"x", "abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch("*", tag)).toBe(true);
    expect(matchesIfNoneMatch('"abcd"', tag)).toBe(false);
    expect(matchesIfNoneMatch(null, tag)).toBe(false);
  });
});

describe("cross-origin reads", () => {
  test("an allowed origin reads the view and its ETag, without credentials; another origin gets no CORS header", async ({ db }) => {
    await prepare(db);
    const created = await newRequest();
    const allowed = await track(created.trackingToken, { origin: SHOP });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(allowed.headers.get("access-control-expose-headers")).toBe("ETag");
    expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
    expect(allowed.headers.get("vary")).toBe("Origin");

    for (const origin of ["https://evil.example", "https://shop.example.evil", "null"]) {
      const refused = await track(created.trackingToken, { origin });
      expect(refused.status, origin).toBe(200);
      expect(refused.headers.get("access-control-allow-origin"), origin).toBeNull();
      expect(refused.headers.get("vary")).toBe("Origin");
    }
  });

  test("a 304 and a 404 carry the CORS headers too, so the page can read them", async ({ db }) => {
    await prepare(db);
    const created = await newRequest();
    const etag = (await track(created.trackingToken)).headers.get("etag")!;
    const unchanged = await track(created.trackingToken, { origin: SHOP, "if-none-match": etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get("access-control-allow-origin")).toBe(SHOP);
    const unknown = await track("A".repeat(32), { origin: SHOP });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/problem+json");
    expect(unknown.headers.get("access-control-allow-origin")).toBe(SHOP);
  });

  test("a preflight allows GET with If-None-Match for listed origins only", async () => {
    const allowed = await preflight("A".repeat(32), { origin: "http://127.0.0.1:5173", "access-control-request-method": "GET", "access-control-request-headers": "if-none-match" });
    expect(allowed.status).toBe(204);
    expect(Object.fromEntries(allowed.headers)).toMatchObject({
      "access-control-allow-origin": "http://127.0.0.1:5173",
      "access-control-allow-methods": "GET",
      "access-control-allow-headers": "If-None-Match",
      "access-control-max-age": "600",
    });
    const refused = await preflight("A".repeat(32), { origin: "http://127.0.0.1:5174", "access-control-request-method": "GET" });
    expect(refused.status).toBe(204);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(refused.headers.get("access-control-allow-methods")).toBeNull();
  });

  test("no setting, no cross-origin reads; a malformed setting is refused by name, not half-applied", async ({ db }) => {
    await prepare(db);
    const created = await newRequest();
    delete process.env.FENCELINE_TRACK_ORIGINS;
    expect((await track(created.trackingToken, { origin: SHOP })).headers.get("access-control-allow-origin")).toBeNull();
    process.env.FENCELINE_TRACK_ORIGINS = `${SHOP},https://shop.example/path`;
    const misconfigured = await track(created.trackingToken, { origin: SHOP });
    expect(misconfigured.status).toBe(500);
    expect(misconfigured.headers.get("access-control-allow-origin")).toBeNull();
  });
});
