/**
 * Evidence an app can read, through `fenceline/client` and the real route handler: with the
 * requests:evidence scope, `requests.get(id, { include: ["steps"] })` gives each step of the app's
 * own request its receipt (verification method, external reference, observed result) and its
 * open review cases — what an app needs to show its customer their refund reference — and
 * nothing of leases, terms, owners or attempts. Without the scope it is refused (403); another
 * app's request is not found (404), and an include other than `steps` is a 400 naming the field.
 */
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { createClient, NotFoundError, UnauthorizedError, type FencelineClient } from "fenceline/client";
import { UnknownOutcome } from "@/lib/adapters/call-outcome";
import { createAppKey } from "@/lib/auth/app-keys";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { done, effect } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { routeFetch } from "@/lib/requests/test-support";
import { testAdapter, testWorker } from "@/lib/worker/test-support";

const URL_BASE = "http://fenceline.test";
const milestone = { upcoming: "Refund", current: "Refunding", done: "Refunded" };

const refunds = testAdapter("refund-desk", {
  invoke: async (call) => ({ externalReference: `rf_${(call.payload as { orderId: string }).orderId}`, result: { status: "sent" } }),
});
/** A destination that promises nothing and whose answer never comes: its step goes to review. */
const courier = testAdapter("courier-opaque", {
  contract: { idempotencyKeys: false, statusQuery: false, fenceEnforcement: false, repetition: "prohibited" },
  invoke: async () => {
    throw new UnknownOutcome("courier-opaque", "connection lost");
  },
});

const refund = defineWorkflow({ kind: "refund", version: 1, input: z.object({ orderId: z.string() }) })
  .step("price", { milestone, run: async () => done({ cents: 1250 }) })
  .step("pay", {
    milestone,
    dependsOn: ["price"],
    adapter: refunds,
    run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId, cents: ctx.results.price.cents })),
  });
const parcel = defineWorkflow({ kind: "parcel", version: 1, input: z.object({ orderId: z.string() }) }).step("ship", {
  milestone,
  adapter: courier,
  attemptBudget: 1,
});

afterAll(async () => {
  await pool().end();
});

const clientFor = (apiKey: string) => createClient<typeof refund | typeof parcel>({ url: URL_BASE, apiKey, fetch: routeFetch });
const refusalOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);

let shopKey: string;
let shop: FencelineClient<typeof refund | typeof parcel>;
let readOnly: FencelineClient<typeof refund | typeof parcel>;
let otherApp: FencelineClient<typeof refund | typeof parcel>;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    shopKey = (await createAppKey(db.pool, "shop", ["requests:create", "requests:read", "requests:evidence"], "admin@test")).key;
    shop = clientFor(shopKey);
    readOnly = clientFor((await createAppKey(db.pool, "reader", ["requests:read"], "admin@test")).key);
    otherApp = clientFor((await createAppKey(db.pool, "rival", ["requests:create", "requests:read", "requests:evidence"], "admin@test")).key);
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

test("an app reads its request's steps with their receipts: the refund reference, how it was verified, what was observed; no lease internals", async ({ db }) => {
  const worker = testWorker(db.pool, [refund, parcel]);
  await worker.start();
  const created = await shop.requests.create("refund", { orderId: "o-77" });
  await shop.requests.waitForEnd(created.id, { timeoutMs: 20_000, intervalMs: 50 });

  const read = await shop.requests.get(created.id, { include: ["steps"] });
  expect(read.status).toBe("completed");
  expect(read.steps).toEqual([
    { name: "price", position: 0, status: "completed", receipt: { verificationMethod: "direct_response", externalReference: null, observedResult: { cents: 1250 }, at: expect.any(String) }, openReviewCases: [] },
    { name: "pay", position: 1, status: "completed", receipt: { verificationMethod: "direct_response", externalReference: "rf_o-77", observedResult: { status: "sent" }, at: expect.any(String) }, openReviewCases: [] },
  ]);
  // The raw answer carries no engine internals at all: no key names a lease, term, owner, attempt…
  const raw = await (await routeFetch(`${URL_BASE}/api/requests/${created.id}?include=steps`, { headers: { authorization: `Bearer ${shopKey}` } })).text();
  expect(raw).not.toMatch(/"[A-Za-z]*(lease|fencing|Term"|owner|attempt|session|epoch|checkpoint|identity)[A-Za-z]*"\s*:/i);
  // Without include, the read is what it was.
  expect(await shop.requests.get(created.id)).not.toHaveProperty("steps");
});

test("a step whose outcome is unknown shows its open review case and no receipt", async ({ db }) => {
  const worker = testWorker(db.pool, [refund, parcel]);
  await worker.start();
  const created = await shop.requests.create("parcel", { orderId: "o-78" });
  let read = await shop.requests.get(created.id, { include: ["steps"] });
  // Until recovery has put the step under review (an event in the database, read as it lands).
  for (let reads = 0; read.steps[0]!.openReviewCases.length === 0 && reads < 2_000; reads += 1) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    read = await shop.requests.get(created.id, { include: ["steps"] });
  }
  expect(read.steps).toEqual([
    {
      name: "ship",
      position: 0,
      status: "needs_review",
      receipt: null,
      openReviewCases: [{ id: expect.any(String), reason: expect.any(String), openedAt: expect.any(String), reviewBy: expect.any(String) }],
    },
  ]);
});

test("without requests:evidence the steps are refused (403); another app's request is not found; include names only steps", async () => {
  const created = await shop.requests.create("refund", { orderId: "o-79" });
  const forbidden = await refusalOf(readOnly.requests.get(created.id, { include: ["steps"] }));
  expect(forbidden).toBeInstanceOf(UnauthorizedError);
  expect((forbidden as UnauthorizedError).status).toBe(403);
  expect((forbidden as UnauthorizedError).message).toMatch(/requests:evidence/);
  expect(await refusalOf(otherApp.requests.get(created.id, { include: ["steps"] }))).toBeInstanceOf(NotFoundError);
  const wrong = await routeFetch(`${URL_BASE}/api/requests/${created.id}?include=leases`, { headers: { authorization: `Bearer ${shopKey}` } });
  expect(wrong.status).toBe(400);
  expect(await wrong.json()).toMatchObject({ code: "invalid-request", issues: [expect.objectContaining({ path: "include" })] });
});
