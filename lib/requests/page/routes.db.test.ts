/**
 * The request page's API through its route handlers: the timeline answers a strong ETag and a
 * bodiless 304 while nothing changed; a body that is not valid is a 400 problem naming the field
 * and writes nothing; a support-only account may not act; a stale view is a 409 problem carrying
 * what the request is now; the bulk routes preview, start (202) and report progress.
 */
import { afterAll, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { GET as timelineRoute } from "@/app/api/requests/[id]/timeline/route";
import { POST as cancelRoute } from "@/app/api/requests/[id]/actions/cancel/route";
import { POST as rerunRoute } from "@/app/api/requests/[id]/actions/rerun/route";
import { POST as previewRoute } from "@/app/api/requests/bulk/preview/route";
import { POST as startRoute } from "@/app/api/requests/bulk/route";
import { GET as progressRoute } from "@/app/api/requests/bulk/[id]/route";
import { signedIn } from "@/lib/auth/test-support";
import { claimSteps } from "@/lib/engine/lease";
import { registerSession } from "@/lib/engine/session";
import { registerTestContracts, servedFor, testKindOf } from "@/lib/engine/test-support";
import { createWorkflow } from "@/lib/engine/workflow";

afterAll(async () => {
  await pool().end();
});

const draft = (requester: string) => ({
  kind: testKindOf("idempotent"),
  input: { n: 1 },
  requester,
  steps: [{ name: "only", adapter: "idempotent", operation: "noop", stepClass: "pure" }],
});

const post = (route: typeof cancelRoute, url: string, headers: Record<string, string>, body: unknown, params: Record<string, string>) =>
  route(new Request(`http://test${url}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }), {
    params: Promise.resolve(params) as never,
  });

test("timeline ETag, problems, roles and stale views through the routes; bulk preview, start and progress", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  await registerTestContracts(db.pool);
  const engineer = await signedIn(db.pool, ["engineer"]);
  const support = await signedIn(db.pool, ["support"]);
  const { workflowId } = await createWorkflow(db.pool, draft("app:routes"));
  const params = { id: workflowId };

  const first = await timelineRoute(new Request(`http://test/api/requests/${workflowId}/timeline`, { headers: engineer.headers }), { params: Promise.resolve(params) });
  expect(first.status).toBe(200);
  const etag = first.headers.get("etag")!;
  const body = (await first.json()) as { version: string; steps: { name: string }[] };
  expect(body.steps.map((s) => s.name)).toEqual(["only"]);
  const unchanged = await timelineRoute(new Request(`http://test/api/requests/${workflowId}/timeline`, { headers: { ...engineer.headers, "if-none-match": etag } }), { params: Promise.resolve(params) });
  expect(unchanged.status).toBe(304);
  expect(await unchanged.text()).toBe("");
  const bad = await timelineRoute(new Request(`http://test/api/requests/${workflowId}/timeline?full=maybe`, { headers: engineer.headers }), { params: Promise.resolve(params) });
  expect(bad.status).toBe(400);

  const invalid = await post(cancelRoute, `/api/requests/${workflowId}/actions/cancel`, engineer.headers, { seenVersion: body.version, reason: "" }, params);
  expect(invalid.status).toBe(400);
  expect(invalid.headers.get("content-type")).toBe("application/problem+json");
  expect(((await invalid.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain("reason");
  const badRerun = await post(rerunRoute, `/api/requests/${workflowId}/actions/rerun`, engineer.headers, { seenVersion: body.version, fromStepId: "nope", reason: "x y z", budget: 99 }, params);
  expect(((await badRerun.json()) as { issues: { path: string }[] }).issues.map((i) => i.path).sort()).toEqual(["budget", "fromStepId"]);

  const forbidden = await post(cancelRoute, `/api/requests/${workflowId}/actions/cancel`, support.headers, { seenVersion: body.version, reason: "support asked" }, params);
  expect(forbidden.status).toBe(403);

  // The step moves under the operator's eyes: the cancel sent with the old version is refused.
  const session = await registerSession(db.pool, "direct");
  await claimSteps(db.pool, session, servedFor("idempotent"), 1);
  const moved = await timelineRoute(new Request(`http://test/api/requests/${workflowId}/timeline`, { headers: { ...engineer.headers, "if-none-match": etag } }), { params: Promise.resolve(params) });
  expect(moved.status).toBe(200);
  const stale = await post(cancelRoute, `/api/requests/${workflowId}/actions/cancel`, engineer.headers, { seenVersion: body.version, reason: "customer asked" }, params);
  expect(stale.status).toBe(409);
  expect(await stale.json()).toMatchObject({ code: "stale-request-view", current: { status: "active", steps: [{ name: "only", state: "leased", fencingTerm: 1 }] } });
  const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [workflowId]);
  expect(rows[0]).toEqual({ status: "active" });

  const filter = { app: "app:routes", status: "active" };
  const preview = await post(previewRoute as never, "/api/requests/bulk/preview", engineer.headers, { action: "cancel", filter }, {});
  expect(await preview.json()).toMatchObject({ count: 1, overLimit: false });
  const badFilter = await post(previewRoute as never, "/api/requests/bulk/preview", engineer.headers, { action: "cancel", filter: { status: "sleeping" } }, {});
  expect(((await badFilter.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual(["filter.status"]);
  const started = await post(startRoute as never, "/api/requests/bulk", engineer.headers, { action: "cancel", filter, expectedCount: 1, reason: "routes test", clientKey: "routes-test-1" }, {});
  expect(started.status).toBe(202);
  const { id } = (await started.json()) as { id: string };
  await expect
    .poll(async () => (await (await progressRoute(new Request(`http://test/api/requests/bulk/${id}`, { headers: engineer.headers }), { params: Promise.resolve({ id }) })).json()) as { state: string; done: number }, { timeout: 10_000 })
    .toMatchObject({ state: "finished", done: 1 });
});
