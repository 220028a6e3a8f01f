/**
 * The request list pages newest first on (created_at, id) without repeating or skipping a row,
 * even when rows share a creation time; each filter narrows it; and a cursor this API did not
 * issue is a 400 problem through the route, never a query.
 */
import { beforeAll, describe, expect } from "vitest";
import { listRequestsQuery } from "@/lib/api/contract/engineer/requests";
import { encodeCursor } from "@/lib/api/cursor";
import { signedIn } from "@/lib/auth/test-support";
import { dbTest as test } from "@/lib/db/test-database";
import { createWorkflows } from "@/lib/engine/workflow";
import { listRequests } from "./list";

const draft = (kind: string, n: number) => ({
  kind,
  input: { n },
  requester: "test",
  steps: [{ name: "only", adapter: "pure", operation: "noop", stepClass: "pure" }],
});

let ids: string[] = [];
let tokens: string[] = [];

describe("request list", () => {
  beforeAll(() => {
    ids = [];
    tokens = [];
  });

  test("pages newest first without repeating or skipping, ties broken by id", async ({ db }) => {
    const created = await createWorkflows(db.pool, [draft("delivery", 1), draft("delivery", 2), draft("delivery", 3), draft("audit", 4), draft("audit", 5)]);
    ids = created.map((w) => w.workflowId);
    tokens = created.map((w) => w.trackingToken);
    // Three share one creation time (to the microsecond); two are older.
    await db.pool.query("UPDATE workflow SET created_at = '2026-01-01T00:00:00.000123Z' WHERE id = ANY($1)", [ids.slice(0, 3)]);
    await db.pool.query("UPDATE workflow SET created_at = '2025-12-31T00:00:00Z' WHERE id = ANY($1)", [ids.slice(3)]);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const result = await listRequests(db.pool, listRequestsQuery.parse({ limit: "2", cursor }));
      expect(result.items.length).toBeLessThanOrEqual(2);
      seen.push(...result.items.map((r) => r.id));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(new Set(seen.slice(0, 3))).toEqual(new Set(ids.slice(0, 3)));
    const first = await listRequests(db.pool, listRequestsQuery.parse({}));
    expect(first.items[0]!.steps).toEqual([expect.objectContaining({ name: "only", adapter: "pure", state: "ready", fencingTerm: 0 })]);
    expect(first.nextCursor).toBeNull();
  });

  test("filters by kind, status, creation range and id or token prefix", async ({ db }) => {
    const list = async (query: Record<string, string>) => (await listRequests(db.pool, listRequestsQuery.parse(query))).items.map((r) => r.id);
    expect(new Set(await list({ kind: "audit" }))).toEqual(new Set(ids.slice(3)));
    expect(await list({ status: "cancelled" })).toEqual([]);
    expect(new Set(await list({ createdFrom: "2026-01-01T00:00:00Z" }))).toEqual(new Set(ids.slice(0, 3)));
    expect(new Set(await list({ createdTo: "2026-01-01T00:00:00Z" }))).toEqual(new Set(ids.slice(3)));
    expect(await list({ q: ids[1]!.slice(0, 13).toUpperCase() })).toEqual([ids[1]]);
    expect(await list({ q: tokens[4]!.slice(0, 10) })).toEqual([ids[4]]);
  });

  test("a foreign or malformed cursor is a 400 problem through the route", async ({ db }) => {
    process.env.DATABASE_URL = db.url;
    const { GET } = await import("@/app/api/requests/route");
    const engineer = await signedIn(db.pool, ["engineer"]);
    const call = (query: string) => GET(new Request(`http://localhost/api/requests?${query}`, { headers: engineer.headers }), { params: Promise.resolve({}) });

    const ok = await call("limit=1");
    expect(ok.status).toBe(200);
    const page = (await ok.json()) as { items: unknown[]; nextCursor: string };
    expect(page.items).toHaveLength(1);
    expect((await call(`limit=1&cursor=${page.nextCursor}`)).status).toBe(200);

    for (const cursor of ["not-a-cursor", encodeCursor(["yesterday", "x"]), encodeCursor([1, 2, 3])]) {
      const refused = await call(`cursor=${encodeURIComponent(cursor)}`);
      expect(refused.status).toBe(400);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(await refused.json()).toMatchObject({ status: 400, issues: [{ path: "cursor", message: "cursor is not one this API issued" }] });
    }
    expect((await call("limit=0")).status).toBe(400);
    expect((await call("status=sleeping")).status).toBe(400);
    await (await import("@/lib/db/pool")).pool().end();
  });
});
