/**
 * Fair share as apps, admins and engineers drive it through the real route handlers: an app sets
 * a request's priority and concurrency key (bad values are a 400 problem naming the field); a
 * kind's declared limit and rule apply until an admin overrides them, which is audited; engineers
 * read per key what is ready, queued behind its limit and in flight, which keys have waited
 * longest, and each rated destination's calls against its rate, also as Prometheus gauges.
 */
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { createClient, InvalidInputError, type FencelineClient } from "fenceline/client";
import { PUT as overrideRoute, DELETE as clearRoute } from "@/app/api/admin/fair-share/[kind]/route";
import { GET as fairShareRoute } from "@/app/api/fair-share/route";
import { GET as prometheusRoute } from "@/app/api/metrics/prometheus/route";
import { createAppKey } from "@/lib/auth/app-keys";
import { signedIn, type SignedIn } from "@/lib/auth/test-support";
import { pool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { defineAdapter } from "@/lib/definitions/adapter";
import { done, effect } from "@/lib/definitions/outcome";
import { registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { claimSteps } from "@/lib/engine/lease";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { routeFetch } from "@/lib/requests/test-support";
import type { FairShareView } from "./view";

const URL_BASE = "http://fenceline.test";
const milestone = { upcoming: "Step", current: "Working", done: "Done" };

const partner = defineAdapter<unknown>({
  name: "partner-api",
  version: "1",
  contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
  timeoutMs: 1_000,
  concurrencyLimit: 5,
  rate: { perSecond: 20, burst: 5 },
  invoke: async () => ({ externalReference: null }),
});
const tenantWork = defineWorkflow({
  kind: "tenant-work",
  version: 1,
  input: z.object({ n: z.number().int() }),
  fairShare: { limitPerKey: 2, priority: 6 },
  steps: {
    prepare: { milestone, run: async () => done() },
    call: { adapter: partner, dependsOn: ["prepare"], milestone, run: async (ctx) => effect(await ctx.invoke({})) },
  },
});
const served = [{ kind: "tenant-work", version: 1 }];

afterAll(async () => {
  await pool().end();
});

let app: FencelineClient;
let admin: SignedIn;
let engineer: SignedIn;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    delete process.env.FENCELINE_MODE;
    await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([tenantWork]));
    app = createClient({ url: URL_BASE, apiKey: (await createAppKey(db.pool, "saas", ["requests:create", "requests:read"], "admin@test")).key, fetch: routeFetch });
    admin = await signedIn(db.pool, ["admin"]);
    engineer = await signedIn(db.pool, ["engineer"]);
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

const kindPath = "http://127.0.0.1:3000/api/admin/fair-share/tenant-work";
const send = (method: "PUT" | "DELETE", body: unknown, who: SignedIn, url = kindPath) =>
  new Request(url, { method, headers: { "content-type": "application/json", origin: "http://127.0.0.1:3000", ...who.headers }, body: JSON.stringify(body) });
const kindParams = (kind = "tenant-work") => ({ params: Promise.resolve({ kind }) });

test("an app sets a request's priority and concurrency key; without a priority the kind's applies; bad values are a 400 naming the field", async ({ db }) => {
  const keyed = await app.requests.create<typeof tenantWork>("tenant-work", { n: 1 }, { concurrencyKey: "customer-42", priority: 8 });
  expect(keyed).toMatchObject({ priority: 8, concurrencyKey: "customer-42" });
  const plain = await app.requests.create<typeof tenantWork>("tenant-work", { n: 2 });
  expect(plain).toMatchObject({ priority: 6, concurrencyKey: null });
  expect(await app.requests.get(keyed.id)).toMatchObject({ priority: 8, concurrencyKey: "customer-42" });
  const { rows } = await db.pool.query("SELECT DISTINCT priority, concurrency_key FROM step WHERE workflow_id = $1", [keyed.id]);
  expect(rows).toEqual([{ priority: 8, concurrency_key: "customer-42" }]);

  for (const [options, field] of [
    [{ priority: 0 }, "priority"],
    [{ priority: 10 }, "priority"],
    [{ priority: 2.5 }, "priority"],
    [{ concurrencyKey: "" }, "concurrencyKey"],
    [{ concurrencyKey: "x".repeat(201) }, "concurrencyKey"],
    [{ concurrencyKey: "tenant\u0000" }, "concurrencyKey"],
    [{ concurrencyKey: "line\nbreak" }, "concurrencyKey"],
  ] as const) {
    const refusal = await app.requests.create<typeof tenantWork>("tenant-work", { n: 3 }, options).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InvalidInputError);
    expect((refusal as InvalidInputError).problem).toMatchObject({ status: 400, code: "invalid-request", issues: [expect.objectContaining({ path: field })] });
  }
});

test("the kind's declared limit and rule apply until an admin overrides them; both changes are audited; others are refused", async ({ db }) => {
  const asAdmin = async (method: "PUT" | "DELETE", body: unknown) => {
    const response = await (method === "PUT" ? overrideRoute : clearRoute)(send(method, body, admin), kindParams());
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  expect((await overrideRoute(send("PUT", { limitPerKey: 5, fairness: "round-robin", reason: "x" }, engineer), kindParams())).status).toBe(403);
  for (const body of [
    { limitPerKey: 0, fairness: "round-robin", reason: "x" },
    { limitPerKey: 10_001, fairness: "round-robin", reason: "x" },
    { limitPerKey: 5, fairness: "fastest-first", reason: "x" },
    { limitPerKey: 5, fairness: "round-robin", reason: "" },
    { limitPerKey: 5, fairness: "round-robin" },
    { limitPerKey: 5, fairness: "round-robin", reason: "nul\u0000" },
  ]) {
    const refused = await asAdmin("PUT", body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid-request" });
  }
  const unknown = await overrideRoute(send("PUT", { limitPerKey: 5, fairness: "round-robin", reason: "x" }, admin, "http://127.0.0.1:3000/api/admin/fair-share/nope"), kindParams("nope"));
  expect(unknown.status).toBe(404);
  const unreadable = await overrideRoute(send("PUT", { limitPerKey: 5, fairness: "round-robin", reason: "x" }, admin, "http://127.0.0.1:3000/api/admin/fair-share/%00"), kindParams("\u0000"));
  expect(unreadable.status).toBe(404);

  const declared = { version: 1, limitPerKey: 2, fairness: "round-robin", priority: 6 };
  const set = await asAdmin("PUT", { limitPerKey: null, fairness: "oldest-first", reason: "tenant migration tonight" });
  expect(set).toEqual({
    status: 200,
    body: {
      kind: "tenant-work",
      declared,
      override: { limitPerKey: null, fairness: "oldest-first", reason: "tenant migration tonight", setBy: admin.email, setAt: expect.any(String) },
      effective: { limitPerKey: null, fairness: "oldest-first" },
    },
  });
  expect((await db.pool.query("SELECT f.* FROM fl_fair_share('tenant-work') f")).rows).toEqual([{ limit_per_key: null, fairness: "oldest-first" }]);
  const cleared = await asAdmin("DELETE", { reason: "migration done" });
  expect(cleared.body).toEqual({ kind: "tenant-work", declared, override: null, effective: { limitPerKey: 2, fairness: "round-robin" } });

  const { rows } = await db.pool.query("SELECT actor, action, subject_type, subject_id, before, after FROM audit_log WHERE action LIKE 'fair_share.%' ORDER BY id");
  expect(rows).toEqual([
    { actor: admin.email, action: "fair_share.overridden", subject_type: "workflow_kind", subject_id: "tenant-work", before: null, after: { limit_per_key: null, fairness: "oldest-first", reason: "tenant migration tonight" } },
    {
      actor: admin.email,
      action: "fair_share.override_cleared",
      subject_type: "workflow_kind",
      subject_id: "tenant-work",
      before: expect.objectContaining({ limit_per_key: null, fairness: "oldest-first", reason: "tenant migration tonight" }),
      after: { reason: "migration done" },
    },
  ]);
});

test("engineers read each key's ready, queued and in-flight steps, the keys waiting longest and each rated destination, also as Prometheus gauges", async ({ db }) => {
  await db.pool.query("DELETE FROM fair_share_override");
  await truncateEngineTables(db.pool);
  // Truncating forgot the destination's rate: a worker starting declares it again.
  await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([tenantWork]));
  for (let n = 0; n < 5; n += 1) await app.requests.create<typeof tenantWork>("tenant-work", { n }, { concurrencyKey: "busy" });
  await app.requests.create<typeof tenantWork>("tenant-work", { n: 9 }, { concurrencyKey: "quiet" });
  const session = await registerSession(db.pool, "direct");
  // Two of busy's steps admitted (its limit), one of them claimed.
  const claimed = await claimSteps(db.pool, session, served, 1);
  expect(claimed).toHaveLength(1);

  const response = await fairShareRoute(new Request("http://127.0.0.1:3000/api/fair-share", { headers: engineer.headers }), { params: Promise.resolve({}) });
  expect(response.status).toBe(200);
  const view = (await response.json()) as FairShareView;
  const busy = view.busiest.find((key) => key.key === "busy")!;
  // busy's first request comes first (created first, same priority): it is the one claimed.
  expect(busy).toMatchObject({ kind: "tenant-work", ready: 1, queued: 3, inFlight: 1, admitted: 2, limitPerKey: 2, fairness: "round-robin" });
  expect(view.busiest.find((key) => key.key === "quiet")).toMatchObject({ ready: 1, queued: 0, inFlight: 0, admitted: 1 });
  expect(view.activeKeys).toBe(2);
  expect(view.waitingLongest.map((key) => key.key)).toContain("busy");
  expect(view.destinations).toEqual([{ adapter: "partner-api", perSecond: 20, burst: 5, declaredBy: "1", callsLastSecond: 0, inFlight: 0, waiting: 0 }]);
  expect(view.kinds.find((kind) => kind.kind === "tenant-work")?.effective).toEqual({ limitPerKey: 2, fairness: "round-robin" });

  const scrape = await prometheusRoute(new Request("http://127.0.0.1:3000/api/metrics/prometheus", { headers: engineer.headers }), { params: Promise.resolve({}) });
  const text = await scrape.text();
  expect(text).toContain('fenceline_fair_share_key_steps{kind="tenant-work",key="busy",state="queued"} 3');
  expect(text).toContain('fenceline_fair_share_key_limit{kind="tenant-work",key="busy"} 2');
  expect(text).toContain('fenceline_destination_rate_per_second{adapter="partner-api"} 20');
  expect(text).toMatch(/fenceline_fair_share_key_oldest_wait_seconds\{kind="tenant-work",key="busy"\} \d/);
});
