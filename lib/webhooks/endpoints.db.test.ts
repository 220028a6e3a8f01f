/**
 * Webhook endpoints through the API: only admins register, disable and delete them, each audited;
 * bad input is a 4xx problem; the secret is shown once and never listed. A delivery retried past
 * its window is dead-lettered; an engineer sees its tries and redelivers it, and it arrives.
 */
import { expect, vi } from "vitest";
import { DELETE as deleteRoute } from "@/app/api/admin/webhook-endpoints/[id]/route";
import { POST as disableRoute } from "@/app/api/admin/webhook-endpoints/[id]/disable/route";
import { GET as listRoute, POST as registerRoute } from "@/app/api/admin/webhook-endpoints/route";
import { GET as deliveriesRoute } from "@/app/api/webhook-endpoints/[id]/deliveries/route";
import { POST as redeliverRoute } from "@/app/api/webhook-endpoints/[id]/redeliver/route";
import { signedIn } from "@/lib/auth/test-support";
import { pool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { createRequestsOf, singleStep } from "@/lib/worker/test-support";
import { Relay } from "./relay";
import { TestReceiver } from "./test-receiver";

const BASE = "http://127.0.0.1:3000";
const request = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  new Request(`${BASE}${path}`, {
    method,
    headers: { origin: BASE, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const params = (id: string) => ({ params: Promise.resolve({ id }) });
const none = { params: Promise.resolve({}) };

test.beforeEach(({ db }) => {
  process.env.DATABASE_URL = db.url;
});
test.afterAll(async () => {
  await pool().end();
});

test("admins register, list, disable and delete endpoints, audited; others are refused; bad input is a 400 problem", async ({ db }) => {
  const admin = await signedIn(db.pool, ["admin"]);
  const engineer = await signedIn(db.pool, ["engineer"]);
  const body = { url: "https://example.test/hooks", eventTypes: ["request.completed"], app: "shop" };

  expect((await registerRoute(request("POST", "/api/admin/webhook-endpoints", engineer.headers, body), none)).status).toBe(403);
  for (const bad of [{ ...body, url: "ftp://example.test" }, { ...body, eventTypes: [] }, { ...body, eventTypes: ["request.started"] }, { ...body, app: "Not An App" }]) {
    const refused = await registerRoute(request("POST", "/api/admin/webhook-endpoints", admin.headers, bad), none);
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
  }

  const created = await registerRoute(request("POST", "/api/admin/webhook-endpoints", admin.headers, body), none);
  expect(created.status).toBe(201);
  const endpoint = (await created.json()) as { id: string; secret: string };
  expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  const listed = await (await listRoute(request("GET", "/api/admin/webhook-endpoints", admin.headers), none)).text();
  expect(listed).toContain(endpoint.id);
  expect(listed).not.toContain(endpoint.secret);

  expect((await disableRoute(request("POST", `/api/admin/webhook-endpoints/${endpoint.id}/disable`, engineer.headers), params(endpoint.id))).status).toBe(403);
  const disabled = await disableRoute(request("POST", `/api/admin/webhook-endpoints/${endpoint.id}/disable`, admin.headers), params(endpoint.id));
  expect(await disabled.json()).toMatchObject({ id: endpoint.id, disabledBy: expect.any(String) });
  expect((await deleteRoute(request("DELETE", `/api/admin/webhook-endpoints/${endpoint.id}`, admin.headers), params(endpoint.id))).status).toBe(204);
  expect((await deleteRoute(request("DELETE", `/api/admin/webhook-endpoints/${endpoint.id}`, admin.headers), params(endpoint.id))).status).toBe(404);

  const { rows } = await db.pool.query("SELECT action FROM audit_log WHERE subject_id = $1 ORDER BY id", [endpoint.id]);
  expect(rows.map((row) => row.action)).toEqual(["webhook_endpoint.registered", "webhook_endpoint.disabled", "webhook_endpoint.deleted"]);
});

test("a delivery retried past its window is dead-lettered; an engineer sees its tries and redelivers it", { timeout: 30_000 }, async ({ db }) => {
  await db.pool.query("DELETE FROM webhook_endpoint");
  const admin = await signedIn(db.pool, ["admin"], "admin-2");
  const engineer = await signedIn(db.pool, ["engineer"], "engineer-2");
  const receiver = new TestReceiver();
  await receiver.start();
  receiver.answer = () => ({ status: 503 });
  const created = await registerRoute(request("POST", "/api/admin/webhook-endpoints", admin.headers, { url: receiver.url, eventTypes: ["request.cancelled"] }), none);
  const endpoint = (await created.json()) as { id: string; secret: string };
  receiver.secret = endpoint.secret;

  const [one] = await createRequestsOf(db.pool, singleStep({ kind: "dead-letter", run: async () => done() }), [{}]);
  await cancelWorkflow(db.pool, one!.workflowId, "test");
  // Retried within a long window until the receiver has seen two tries, then a relay whose
  // window has passed: a short window alone could close before a busy machine tried twice.
  const settings = { timeoutMs: 500, backoffBaseMs: 50, backoffMaxMs: 100, intervalMs: 20 };
  let relay = new Relay(db.pool, "relay-in-test", { ...settings, retryWindowMs: 60_000 });
  relay.start();
  try {
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    await relay.stop();
    relay = new Relay(db.pool, "relay-in-test", { ...settings, retryWindowMs: 1 });
    relay.start();
    const deliveries = async () => (await (await deliveriesRoute(request("GET", `/api/webhook-endpoints/${endpoint.id}/deliveries`, engineer.headers), params(endpoint.id))).json()) as {
      endpoint: { failingSince: string | null; counts: { deadLettered: number } };
      deliveries: { id: string; state: string; attempts: number; tries: { statusCode: number | null; latencyMs: number | null }[] }[];
    };
    await vi.waitFor(async () => expect((await deliveries()).deliveries[0]).toMatchObject({ state: "dead_lettered" }), { timeout: 10_000 });
    const dead = await deliveries();
    expect(dead.endpoint.failingSince).not.toBeNull();
    expect(dead.deliveries[0]!.attempts).toBeGreaterThan(1);
    expect(dead.deliveries[0]!.tries.every((attempt) => attempt.statusCode === 503 && attempt.latencyMs !== null)).toBe(true);
    const seenWhenDead = receiver.received.length;

    receiver.answer = () => ({ status: 200 });
    const support = await signedIn(db.pool, ["support"], "support-2");
    expect((await redeliverRoute(request("POST", `/api/webhook-endpoints/${endpoint.id}/redeliver`, support.headers, { deliveryId: null }), params(endpoint.id))).status).toBe(403);
    const redelivered = await redeliverRoute(request("POST", `/api/webhook-endpoints/${endpoint.id}/redeliver`, engineer.headers, { deliveryId: null }), params(endpoint.id));
    expect(await redelivered.json()).toEqual({ redelivered: 1 });
    await vi.waitFor(async () => expect((await deliveries()).deliveries[0]).toMatchObject({ state: "delivered" }), { timeout: 10_000 });
    expect(receiver.received.length).toBe(seenWhenDead + 1);
    expect(receiver.received.at(-1)!.verified).toBe(true);
    expect((await deliveries()).endpoint.failingSince).toBeNull();
    const { rows } = await db.pool.query("SELECT action FROM audit_log WHERE subject_id = $1 AND action = 'webhook.redelivered'", [endpoint.id]);
    expect(rows).toHaveLength(1);
  } finally {
    await relay.stop();
    await receiver.stop();
  }
});
