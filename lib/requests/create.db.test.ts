/**
 * An end user creates a request and follows it by its tracking token. The Idempotency-Key makes
 * creation repeatable (same key, same input: the same request) and refuses a key reused for a
 * different input; an unknown or malformed token is the same 404 as any other.
 */
import { afterAll, expect } from "vitest";
import { POST as createRoute } from "@/app/api/requests/route";
import { GET as trackRoute } from "@/app/api/track/[token]/route";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { ENGINE_WORDS } from "@/lib/projection/project";
import { createRequest } from "./create";

afterAll(async () => {
  await pool().end();
});

const post = (body: unknown, key?: string) =>
  createRoute(
    new Request("http://test/api/requests", {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      body: JSON.stringify(body),
    }),
    { params: Promise.resolve({}) },
  );

const track = (token: string) => trackRoute(new Request(`http://test/api/track/${token}`), { params: Promise.resolve({ token }) });

test("creating returns the tracking link; the same key and input return the same request", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  const input = { recipient: "ada@example.test", message: "hi", deliverVia: "idempotent" };
  const first = await post(input, "order-1");
  expect(first.status).toBe(201);
  const created = await first.json();
  expect(created).toMatchObject({ status: "active", trackUrl: `/track/${created.trackingToken}` });
  expect(created.trackingToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
  expect(first.headers.get("location")).toBe(`/api/track/${created.trackingToken}`);

  const again = await post(input, "order-1");
  expect(again.status).toBe(200);
  expect(await again.json()).toEqual(created);

  const reused = await post({ ...input, message: "something else" }, "order-1");
  expect(reused.status).toBe(422);
  expect(reused.headers.get("content-type")).toBe("application/problem+json");
  expect(await reused.json()).toMatchObject({ type: "urn:fenceline:problem:idempotency-key-reused", code: "idempotency-key-reused" });

  const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM workflow");
  expect(rows[0].n).toBe(1);
});

test("a malformed Idempotency-Key or body is a 400 problem; without a key every call creates", async () => {
  expect((await post({ recipient: "a", message: "b" }, "")).status).toBe(400);
  expect((await post({ recipient: "a", message: "b" }, "caf\u00e9")).status).toBe(400);
  expect((await post({ recipient: "a", message: "b" }, "x".repeat(201))).status).toBe(400);
  expect((await post({ recipient: "a", message: "b" }, "a\tb")).status).toBe(400);
  const invalid = await post({ recipient: "a" });
  expect(invalid.status).toBe(400);
  expect((await invalid.json()).issues[0].path).toBe("message");
  expect((await post({ recipient: "a", message: "b" })).status).toBe(201);
  expect((await post({ recipient: "a", message: "b" })).status).toBe(201);
});

test("tracking shows Preparing for a new request, with no engine word", async ({ db }) => {
  const { request } = await createRequest(db.pool, { input: { recipient: "lin@example.test", message: "m" }, idempotencyKey: null, requester: "test" });
  const response = await track(request.trackingToken);
  expect(response.status).toBe(200);
  const view = await response.json();
  expect(view).toMatchObject({ title: "Delivery to lin@example.test", headline: { state: "preparing", label: "Preparing" }, terminal: false });
  expect(view.milestones.map((m: { label: string }) => m.label)).toEqual(["Checking your request", "Reservation", "Delivery", "Confirmation"]);
  expect(JSON.stringify(view)).not.toMatch(new RegExp(ENGINE_WORDS.join("|"), "i"));
});

test("an unknown token and a malformed one get the very same 404", async () => {
  const unknown = await track("A".repeat(32));
  const malformed = await track("not-a-token");
  expect(unknown.status).toBe(404);
  expect(malformed.status).toBe(404);
  expect(await unknown.text()).toBe(await malformed.text());
});
