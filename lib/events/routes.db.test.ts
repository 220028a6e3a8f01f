/**
 * An app sends events through `fenceline/client` and the real route handlers, with its app key;
 * a third party posts to a wait's one-time URL. An accepted event is durable before the answer
 * and a repeated send is one event; every refusal is a 4xx problem naming what is wrong, and
 * writes nothing.
 */
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { ConflictError, createClient, InvalidInputError, UnauthorizedError, type FencelineClient } from "fenceline/client";
import { createAppKey } from "@/lib/auth/app-keys";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { done } from "@/lib/definitions/outcome";
import { registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import { routeFetch } from "@/lib/requests/test-support";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";

const URL_BASE = "http://fenceline.test";
const milestone = { upcoming: "Approval", current: "Waiting for your approval", done: "Approved" };

const approval = defineWorkflow({ kind: "quote", version: 1, input: z.object({ quoteId: z.string() }) })
  .event("approved", { milestone, name: "quote.approved", key: (ctx) => ctx.input.quoteId, payload: z.object({ by: z.string() }), url: true })
  .step("book", { dependsOn: ["approved"], milestone, run: async (ctx) => done({ by: ctx.results.approved.payload.by }) });

afterAll(async () => {
  await pool().end();
});

const clientFor = (apiKey: string): FencelineClient => createClient({ url: URL_BASE, apiKey, fetch: routeFetch });
const refusalOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);
const eventCount = async (db: TestDatabase) => (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM event`)).rows[0]!.n;

let shop: FencelineClient;
let readOnly: FencelineClient;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([approval]));
    shop = clientFor((await createAppKey(db.pool, "shop", ["events:send"], "admin@test")).key);
    readOnly = clientFor((await createAppKey(db.pool, "reader", ["requests:read"], "admin@test")).key);
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

test("an app's event is accepted once, kept until a wait takes it, and the same key sends it once", async ({ db }) => {
  const first = await shop.events.send("quote.approved", "q-1", { by: "ana" }, { idempotencyKey: "approve-q-1" });
  expect(first).toMatchObject({ name: "quote.approved", key: "q-1", duplicate: false, consumedBy: null });
  expect(await shop.events.send("quote.approved", "q-1", { by: "ana" }, { idempotencyKey: "approve-q-1" })).toEqual({ ...first, duplicate: true });
  const reused = await refusalOf(shop.events.send("quote.approved", "q-1", { by: "bob" }, { idempotencyKey: "approve-q-1" }));
  expect(reused).toBeInstanceOf(ConflictError);
  expect((reused as ConflictError).code).toBe("event-key-reused");
  const { rows } = await db.pool.query(`SELECT sender, payload FROM event WHERE id = $1`, [first.id]);
  expect(rows).toEqual([{ sender: "app:shop", payload: { by: "ana" } }]);
});

test("bad sends are 4xx problems naming the field, and write nothing", async ({ db }) => {
  const before = await eventCount(db);
  const refusals = await Promise.all([
    refusalOf(shop.events.send("quote.nope", "q-1", { by: "ana" })),
    refusalOf(shop.events.send("Quote Approved!", "q-1", { by: "ana" })),
    refusalOf(shop.events.send("quote.approved", "k".repeat(201), { by: "ana" })),
    refusalOf(shop.events.send("quote.approved", "q-1", { by: "x".repeat(40 * 1024) })),
    refusalOf(shop.events.send("quote.approved", "q-1", { by: 3 })),
  ]);
  const described = refusals.map((error) => {
    expect(error).toBeInstanceOf(InvalidInputError);
    const refused = error as InvalidInputError;
    return { status: refused.status, code: refused.code, fields: refused.issues.map((issue) => issue.path) };
  });
  expect(described).toEqual([
    { status: 422, code: "unknown-event", fields: ["name"] },
    { status: 400, code: "invalid-request", fields: ["name"] },
    { status: 400, code: "invalid-request", fields: ["key"] },
    { status: 400, code: "invalid-request", fields: ["payload"] },
    { status: 422, code: "invalid-input", fields: ["payload.by"] },
  ]);
  // Past what one API request may carry at all, the body is refused before it is read.
  const huge = await refusalOf(shop.events.send("quote.approved", "q-1", { by: "x".repeat(70 * 1024) }));
  expect((huge as { status: number; code: string })).toMatchObject({ status: 413, code: "payload-too-large" });
  const forbidden = await refusalOf(readOnly.events.send("quote.approved", "q-1", { by: "ana" }));
  expect(forbidden).toBeInstanceOf(UnauthorizedError);
  expect((forbidden as UnauthorizedError).status).toBe(403);
  expect(await eventCount(db)).toBe(before);
});

test("a third party settles a wait through its one-time URL, once; afterwards the URL is gone (410)", async ({ db }) => {
  const [request] = await createRequestsOf(db.pool, approval, [{ quoteId: "q-url" }]);
  const worker = testWorker(db.pool, [approval]);
  await worker.start();
  try {
    const approvedId = request!.stepIds.get("approved")!;
    let token: string | undefined;
    for (let tries = 0; !token && tries < 500; tries += 1) {
      token = (await db.pool.query<{ url_token: string }>(`SELECT url_token FROM event_wait WHERE step_id = $1`, [approvedId])).rows[0]?.url_token;
      if (!token) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const post = (body: unknown) => routeFetch(`${URL_BASE}/api/events/url/${token}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const accepted = await post({ by: "the customer" });
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toMatchObject({ name: "quote.approved", key: "q-url", consumedBy: { requestId: request!.workflowId, step: "approved" } });
    const again = await post({ by: "someone else" });
    expect(again.status).toBe(410);
    expect(again.headers.get("content-type")).toBe("application/problem+json");
    expect((await again.json()).code).toBe("wait-url-gone");
    expect((await routeFetch(`${URL_BASE}/api/events/url/not-a-token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(410);
  } finally {
    await worker.stop();
  }
});
