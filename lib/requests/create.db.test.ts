/**
 * An app creates, reads, lists and cancels its requests through `fenceline/client` and the real
 * route handlers, with its app key. Requests are of registered kinds only, their input checked
 * against the registered schema field by field; the Idempotency-Key makes creation repeatable
 * per app; every refusal is its own typed error; keys are scoped, revocable at once, and confined
 * to their app; and an end user follows a request by its tracking token alone.
 */
import { afterAll, describe, expect } from "vitest";
import {
  ConflictError,
  createClient,
  InvalidInputError,
  NotFoundError,
  UnauthorizedError,
  UnknownKindError,
  type FencelineClient,
} from "fenceline/client";
import { GET as trackRoute } from "@/app/api/track/[token]/route";
import { GET as listStepsRoute } from "@/app/api/steps/route";
import { createAppKey, revokeAppKey } from "@/lib/auth/app-keys";
import { createWorkerToken } from "@/lib/auth/worker-tokens";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { ENGINE_WORDS } from "@/lib/definitions/words";
import type { DeliveryWorkflow } from "@/lib/demo/workflow";
import { registerDelivery, routeFetch } from "./test-support";

const URL_BASE = "http://fenceline.test";

afterAll(async () => {
  await pool().end();
});

const clientFor = (apiKey: string): FencelineClient => createClient({ url: URL_BASE, apiKey, fetch: routeFetch });
const track = (token: string) => trackRoute(new Request(`${URL_BASE}/api/track/${token}`), { params: Promise.resolve({ token }) });
const refusalOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);

let shop: FencelineClient;
let other: FencelineClient;
let prepared: Promise<void> | null = null;

/** The file's database with the delivery workflow registered and two apps, each with a key. */
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    delete process.env.FENCELINE_MODE;
    await registerDelivery(db.pool);
    shop = clientFor((await createAppKey(db.pool, "shop", ["requests:create", "requests:read"], "admin@test")).key);
    other = clientFor((await createAppKey(db.pool, "other", ["requests:create", "requests:read"], "admin@test")).key);
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

describe("an app's requests", () => {
  test("creating returns the tracking link; the same key and input return the same request", async ({ db }) => {
    const input = { recipient: "ada@example.test", message: "hi", deliverVia: "idempotent" } as const;
    const created = await shop.requests.create<DeliveryWorkflow>("delivery", input, { idempotencyKey: "order-1" });
    expect(created).toMatchObject({ kind: "delivery", version: 1, status: "active", created: true, trackUrl: `/track/${created.trackingToken}` });
    expect(created.trackingUrl).toBe(`${URL_BASE}/track/${created.trackingToken}`);
    expect(created.trackingToken).toMatch(/^[A-Za-z0-9_-]{32}$/);

    const again = await shop.requests.create<DeliveryWorkflow>("delivery", input, { idempotencyKey: "order-1" });
    expect(again).toEqual({ ...created, created: false });

    const reused = await refusalOf(shop.requests.create<DeliveryWorkflow>("delivery", { ...input, message: "something else" }, { idempotencyKey: "order-1" }));
    expect(reused).toBeInstanceOf(ConflictError);
    expect(reused).toMatchObject({ status: 422, code: "idempotency-key-reused" });

    // Another app's key of the same name names another intent.
    const theirs = await other.requests.create<DeliveryWorkflow>("delivery", input, { idempotencyKey: "order-1" });
    expect(theirs.id).not.toBe(created.id);

    const { rows } = await db.pool.query("SELECT requester, count(*)::int AS n FROM workflow WHERE idempotency_key = 'order-1' GROUP BY requester ORDER BY requester");
    expect(rows).toEqual([{ requester: "app:other", n: 1 }, { requester: "app:shop", n: 1 }]);
  });

  test("input that does not match the registered schema is refused, naming each field", async () => {
    const refused = await refusalOf(shop.requests.create("delivery", { recipient: "", deliverVia: "fax", priority: 1 }));
    expect(refused).toBeInstanceOf(InvalidInputError);
    const issues = (refused as InvalidInputError).issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "recipient", message: expect.stringContaining("fewer than 1") },
        { path: "message", message: "is required" },
        { path: "deliverVia", message: 'must be one of "idempotent", "queryable", "opaque"' },
        { path: "priority", message: "is not a field of this input" },
      ]),
    );
    expect((refused as InvalidInputError).status).toBe(422);
  });

  test("a kind no worker registered is refused, naming the kinds that exist", async () => {
    const refused = await refusalOf(shop.requests.create("parcel", {}));
    expect(refused).toBeInstanceOf(UnknownKindError);
    expect((refused as UnknownKindError).kinds).toEqual([{ kind: "delivery", versions: [1] }]);
    expect(await refusalOf(shop.requests.create("delivery", { recipient: "a", message: "b" }, { version: 9 }))).toBeInstanceOf(UnknownKindError);
  });

  test("reads a request with what its end user sees, lists the app's own, and never another app's", async () => {
    const created = await shop.requests.create<DeliveryWorkflow>("delivery", { recipient: "lin@example.test", message: "m" });
    const read = await shop.requests.get(created.id);
    expect(read).toMatchObject({ id: created.id, status: "active", trackingUrl: created.trackingUrl });
    expect(read.progress).toMatchObject({ title: "Delivery to lin@example.test", headline: { state: "preparing", label: "Preparing" }, terminal: false });
    expect(read.progress.milestones.map((m) => m.label)).toEqual(["Checking your request", "Reservation", "Delivery", "Confirmation"]);
    expect(JSON.stringify(read.progress)).not.toMatch(new RegExp(ENGINE_WORDS.join("|"), "i"));

    const page = await shop.requests.list({ limit: 200 });
    expect(page.items.map((item) => item.id)).toContain(created.id);
    expect((await other.requests.list({ limit: 200 })).items.map((item) => item.id)).not.toContain(created.id);
    expect(await refusalOf(other.requests.get(created.id))).toBeInstanceOf(NotFoundError);
    expect(await refusalOf(other.requests.cancel(created.id))).toBeInstanceOf(NotFoundError);
  });

  test("cancels a request once; cancelling it again, or one that ended, is a conflict", async ({ db }) => {
    const created = await shop.requests.create<DeliveryWorkflow>("delivery", { recipient: "kim@example.test", message: "m" });
    const cancelled = await shop.requests.cancel(created.id, { reason: "customer changed their mind" });
    expect(cancelled).toMatchObject({ status: "cancelled", statusReason: "customer changed their mind", progress: { headline: { state: "cancelled" }, terminal: true } });
    const again = await refusalOf(shop.requests.cancel(created.id));
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ status: 409, code: "request-ended" });

    const finished = await shop.requests.create<DeliveryWorkflow>("delivery", { recipient: "joe@example.test", message: "m" });
    await db.pool.query("UPDATE workflow SET status = 'completed' WHERE id = $1", [finished.id]);
    const refused = await refusalOf(shop.requests.cancel(finished.id));
    expect(refused).toBeInstanceOf(ConflictError);
    expect(refused).toMatchObject({ status: 409, code: "request-ended" });
  });
});

describe("app keys", () => {
  test("a key without the scope is refused (403); a revoked key at once (401); none at all (401)", async ({ db }) => {
    const readOnly = await createAppKey(db.pool, "reporting", ["requests:read"], "admin@test");
    const refused = await refusalOf(clientFor(readOnly.key).requests.create("delivery", { recipient: "a", message: "b" }));
    expect(refused).toBeInstanceOf(UnauthorizedError);
    expect(refused).toMatchObject({ status: 403 });
    expect((await clientFor(readOnly.key).requests.list()).items).toEqual([]);

    await revokeAppKey(db.pool, readOnly.id, "admin@test");
    expect(await refusalOf(clientFor(readOnly.key).requests.list())).toMatchObject({ status: 401 });
    expect(await refusalOf(clientFor("fl_app_no-such-key").requests.list())).toMatchObject({ status: 401 });
    const { rows } = await db.pool.query("SELECT action FROM audit_log WHERE subject_type = 'app_key' AND subject_id = $1 ORDER BY id", [readOnly.id]);
    expect(rows.map((row) => row.action)).toEqual(["app_key.created", "app_key.revoked"]);
    const { rows: stored } = await db.pool.query("SELECT key_sha256 FROM app_key WHERE id = $1", [readOnly.id]);
    expect(stored[0].key_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  // Three credentials, three doors: none opens another's.
  test("an app key cannot act as a worker or as staff, nor a worker token as an app", async ({ db }) => {
    const app = await createAppKey(db.pool, "intruder", ["requests:create", "requests:read"], "admin@test");
    const worker = await createWorkerToken(db.pool, "honest-worker", "admin@test");
    const asWorker = await routeFetch(`${URL_BASE}/api/worker/register-session`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${app.key}` },
      body: JSON.stringify({ definitions: { workflows: [], adapters: [] } }),
    });
    expect(asWorker.status).toBe(401);
    expect(asWorker.headers.get("content-type")).toBe("application/problem+json");
    const asStaff = await listStepsRoute(new Request(`${URL_BASE}/api/steps`, { headers: { authorization: `Bearer ${app.key}` } }), { params: Promise.resolve({}) });
    expect(asStaff.status).toBe(401);
    const workerAsApp = await refusalOf(clientFor(worker.token).requests.list());
    expect(workerAsApp).toBeInstanceOf(UnauthorizedError);
    expect(workerAsApp).toMatchObject({ status: 401 });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM worker_session WHERE transport = 'http'");
    expect(rows[0].n).toBe(0);
  });

  test("outside demo mode a request needs an app key; in demo mode an anonymous one is taken, rate-limited", async () => {
    const post = () =>
      routeFetch(`${URL_BASE}/api/requests`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "delivery", input: { recipient: "a", message: "b" } }),
      });
    const refused = await post();
    expect(refused.status).toBe(401);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    process.env.FENCELINE_MODE = "demo";
    process.env.FENCELINE_DESTINATION_URL = "http://127.0.0.1:9";
    try {
      expect((await post()).status).toBe(201);
    } finally {
      delete process.env.FENCELINE_MODE;
      delete process.env.FENCELINE_DESTINATION_URL;
    }
  });
});

describe("tracking", () => {
  test("an unknown token and a malformed one get the very same 404", async () => {
    const unknown = await track("A".repeat(32));
    const malformed = await track("not-a-token");
    expect(unknown.status).toBe(404);
    expect(malformed.status).toBe(404);
    expect(await unknown.text()).toBe(await malformed.text());
  });

  test("a request's tracking token shows its progress, with no engine word", async () => {
    const created = await shop.requests.create<DeliveryWorkflow>("delivery", { recipient: "eve@example.test", message: "m" });
    const response = await track(created.trackingToken);
    expect(response.status).toBe(200);
    const view = await response.json();
    expect(view).toMatchObject({ title: "Delivery to eve@example.test", headline: { state: "preparing" } });
    expect(JSON.stringify(view)).not.toMatch(new RegExp(ENGINE_WORDS.join("|"), "i"));
  });
});
