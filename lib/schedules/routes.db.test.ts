/**
 * Schedules through the real route handlers and `fenceline/client`: an admin (session) and an
 * app (app key with schedules:manage) create, list, read (next 5 due times, last firings with
 * their requests), pause, resume and delete; every change is in the audit log; a cron that does
 * not parse, a zone that does not exist and an unknown kind are 400 problems naming the field
 * with nothing written; an app sees only its own; an app key without the scope is refused; a
 * schedule defined next to its workflow is refused at definition time when wrong and registers
 * idempotently.
 */
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { ConflictError, createClient, InvalidInputError, NotFoundError, UnauthorizedError, type FencelineClient } from "fenceline/client";
import { defineSchedule, DefinitionError } from "fenceline";
import { GET as listRoute, POST as createRoute } from "@/app/api/schedules/route";
import { DELETE as deleteRoute, GET as readRoute } from "@/app/api/schedules/[name]/route";
import { POST as pauseRoute } from "@/app/api/schedules/[name]/pause/route";
import { createAppKey } from "@/lib/auth/app-keys";
import { signedIn, type SignedIn } from "@/lib/auth/test-support";
import { pool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import { routeFetch } from "@/lib/requests/test-support";
import { scheduleRoom } from "./room";

const URL_BASE = "http://127.0.0.1:3000";
const milestone = { upcoming: "Later", current: "Reporting", done: "Reported" };
const report = defineWorkflow({ kind: "report", version: 1, input: z.object({ scope: z.string(), dueAt: z.string().optional() }) }).step("only", { milestone, run: async () => done() });

afterAll(async () => {
  await pool().end();
});

let shop: FencelineClient;
let other: FencelineClient;
let unscoped: FencelineClient;
let admin: SignedIn;
let engineer: SignedIn;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    delete process.env.FENCELINE_MODE;
    await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([report]));
    const clientOf = async (app: string, scopes: Parameters<typeof createAppKey>[2]) => createClient({ url: URL_BASE, apiKey: (await createAppKey(db.pool, app, scopes, "admin@test")).key, fetch: routeFetch });
    shop = await clientOf("shop", ["schedules:manage"]);
    other = await clientOf("other", ["schedules:manage"]);
    unscoped = await clientOf("plain", ["requests:create"]);
    admin = await signedIn(db.pool, ["admin"]);
    engineer = await signedIn(db.pool, ["engineer"]);
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

const send = (method: string, url: string, who: SignedIn, body?: unknown) =>
  new Request(url, {
    method,
    headers: { origin: URL_BASE, ...who.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const named = (name: string) => ({ params: Promise.resolve({ name }) });
const none = { params: Promise.resolve({}) };
const counts = async (db: TestDatabase) =>
  (await db.pool.query<{ schedules: number; audits: number }>(`SELECT (SELECT count(*) FROM schedule)::int AS schedules, (SELECT count(*) FROM audit_log WHERE subject_type = 'schedule')::int AS audits`)).rows[0]!;

test("an admin creates, reads (next 5 due times, last firings with requests), pauses and deletes; engineers read; each change audited", async ({ db }) => {
  const body = { name: "nightly", kind: "report", input: { scope: "all" }, cron: "0 2 * * *", timeZone: "Europe/Paris", overlap: "queue_one", catchUp: "all", catchUpLimit: 2 };
  const created = await createRoute(send("POST", `${URL_BASE}/api/schedules`, admin, body), none);
  expect(created.status).toBe(201);
  const schedule = await created.json();
  expect(schedule).toMatchObject({ name: "nightly", owner: "schedule", version: 1, state: "active", createdBy: admin.email, overlap: "queue_one", catchUp: "all", catchUpLimit: 2 });
  expect(schedule.upcoming).toHaveLength(5);
  // 02:00 in Paris is 01:00 UTC in winter.
  expect(schedule.upcoming[0]).toMatch(/T01:00:00\.000Z$/);
  expect((await createRoute(send("POST", `${URL_BASE}/api/schedules`, admin, body), none)).status).toBe(200);

  // A missed due time fires; the view shows the firing with its request.
  await db.pool.query(`UPDATE schedule SET next_due_at = date_trunc('day', now()) - interval '1 day' + interval '1 hour' WHERE name = 'nightly'`);
  expect(await scheduleRoom.settleDue(db.pool, 10)).toBeGreaterThanOrEqual(1);
  const read = await (await readRoute(send("GET", `${URL_BASE}/api/schedules/nightly`, engineer), named("nightly"))).json();
  // Latest first: the earliest of the missed due times started, a later one (queue_one) waits behind it.
  const started = read.lastFirings.at(-1);
  expect(started).toMatchObject({ state: "started", requestStatus: "active" });
  expect(started.requestId).toMatch(/^[0-9a-f-]{36}$/);
  const list = await (await listRoute(send("GET", `${URL_BASE}/api/schedules`, engineer), none)).json();
  expect(list.items.map((item: { name: string }) => item.name)).toContain("nightly");

  // Engineers read but do not change.
  expect((await pauseRoute(send("POST", `${URL_BASE}/api/schedules/nightly/pause`, engineer), named("nightly"))).status).toBe(403);
  const paused = await pauseRoute(send("POST", `${URL_BASE}/api/schedules/nightly/pause`, admin, { reason: "maintenance" }), named("nightly"));
  expect(await paused.json()).toMatchObject({ state: "paused", upcoming: [] });
  expect((await deleteRoute(send("DELETE", `${URL_BASE}/api/schedules/nightly`, admin), named("nightly"))).status).toBe(200);
  expect((await readRoute(send("GET", `${URL_BASE}/api/schedules/nightly`, admin), named("nightly"))).status).toBe(404);
  const { rows } = await db.pool.query<{ action: string; actor: string }>(`SELECT action, actor FROM audit_log WHERE subject_type = 'schedule' AND subject_id = 'nightly' ORDER BY id`);
  expect(rows).toEqual([
    { action: "schedule.created", actor: admin.email },
    { action: "schedule.paused", actor: admin.email },
    { action: "schedule.deleted", actor: admin.email },
  ]);
});

test("a cron that does not parse, a zone that does not exist, an unknown kind: a 400 problem naming the field, nothing written", async ({ db }) => {
  const before = await counts(db);
  const refusal = async (body: Record<string, unknown>) => {
    const response = await createRoute(send("POST", `${URL_BASE}/api/schedules`, admin, { name: "bad", kind: "report", input: { scope: "x" }, cron: "0 2 * * *", ...body }), none);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/application\/problem\+json/);
    const problem = await response.json();
    return problem.issues.map((issue: { path: string }) => issue.path);
  };
  expect(await refusal({ cron: "0 25 * * *" })).toEqual(["cron"]);
  expect(await refusal({ timeZone: "Europe/Atlantis" })).toEqual(["timeZone"]);
  expect(await refusal({ kind: "no-such-kind" })).toEqual(["kind"]);
  expect(await refusal({ input: { scope: 3 } })).toEqual(["input.scope"]);
  expect(await refusal({ overlap: "sometimes" })).toEqual(["overlap"]);
  expect(await counts(db)).toEqual(before);
});

test("an app manages its own schedules through the client, idempotently; another app sees none of them; a key without the scope is refused", async ({ db }) => {
  const nightly = defineSchedule(report, { name: "shop-report", cron: "*/10 * * * * *", input: { scope: "shop" }, dueTimeField: "dueAt", overlap: "allow" });
  const first = await shop.schedules.create(nightly);
  expect(first).toMatchObject({ created: true, owner: "app:shop", kind: "report", version: 1, dueTimeField: "dueAt" });
  // Registering from code at every start is the same schedule.
  expect(await shop.schedules.create(nightly)).toMatchObject({ created: false, id: first.id });
  await expect(shop.schedules.create({ ...nightly, cron: "0 * * * *" })).rejects.toBeInstanceOf(ConflictError);

  expect((await shop.schedules.list()).items.map((s) => s.name)).toEqual(["shop-report"]);
  expect((await other.schedules.list()).items).toEqual([]);
  await expect(other.schedules.get("shop-report")).rejects.toBeInstanceOf(NotFoundError);
  await expect(other.schedules.pause("shop-report")).rejects.toBeInstanceOf(NotFoundError);
  await expect(unscoped.schedules.list()).rejects.toBeInstanceOf(UnauthorizedError);

  const badZone = await shop.schedules.create({ name: "x", kind: "report", cron: "* * * * *", timeZone: "Nowhere/City", input: { scope: "x" } }).catch((error: unknown) => error);
  expect(badZone).toBeInstanceOf(InvalidInputError);
  expect((badZone as InvalidInputError).issues.map((issue) => issue.path)).toEqual(["timeZone"]);

  expect(await shop.schedules.pause("shop-report", { reason: "holiday" })).toMatchObject({ state: "paused" });
  expect(await shop.schedules.resume("shop-report")).toMatchObject({ state: "active" });
  await shop.schedules.delete("shop-report");
  expect((await shop.schedules.list()).items).toEqual([]);
  const { rows } = await db.pool.query<{ action: string; actor: string }>(`SELECT action, actor FROM audit_log WHERE subject_id = 'shop-report' ORDER BY id`);
  expect(rows.map((r) => `${r.action} ${r.actor}`)).toEqual(["schedule.created app:shop", "schedule.paused app:shop", "schedule.resumed app:shop", "schedule.deleted app:shop"]);
});

test("a schedule defined next to its workflow is checked where it is written", () => {
  expect(() => defineSchedule(report, { name: "r", cron: "every day", input: { scope: "x" } })).toThrow(DefinitionError);
  expect(() => defineSchedule(report, { name: "r", cron: "0 2 * * *", timeZone: "Mars/Base", input: { scope: "x" } })).toThrow(/timeZone/);
  expect(() => defineSchedule(report, { name: "r", cron: "0 2 * * *", input: { scope: 1 as unknown as string } })).toThrow(/input\.scope/);
});
