/**
 * An admin creates and revokes app keys through the admin routes; only admins may; the key is
 * shown once and stored as its hash; the key works with fenceline/client at once and is refused at
 * once after its revocation; both actions are audited.
 */
import { afterAll, expect } from "vitest";
import { createClient, UnauthorizedError } from "fenceline/client";
import { POST as createKeyRoute, GET as listKeysRoute } from "@/app/api/admin/app-keys/route";
import { POST as revokeKeyRoute } from "@/app/api/admin/app-keys/[id]/revoke/route";
import { APP_KEY_SCOPES } from "@/lib/auth/app-key-scopes";
import { createAppKey } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import type { DeliveryWorkflow } from "@/lib/demo/workflow";
import { registerDelivery, routeFetch } from "@/lib/requests/test-support";
import { signedIn } from "./test-support";

afterAll(async () => {
  await pool().end();
});

const none = { params: Promise.resolve({}) };
const post = (url: string, body: unknown, headers: Record<string, string>) =>
  new Request(`http://127.0.0.1:3000${url}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

test("an admin's app key creates requests at once, is listed without its value, and is refused at once once revoked", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  delete process.env.FENCELINE_MODE;
  await registerDelivery(db.pool);
  const [admin, engineer] = await Promise.all([signedIn(db.pool, ["admin"]), signedIn(db.pool, ["engineer", "support"])]);

  expect((await createKeyRoute(post("/api/admin/app-keys", { app: "shop", scopes: ["requests:create"] }, engineer.headers), none)).status).toBe(403);
  expect((await listKeysRoute(new Request("http://127.0.0.1:3000/api/admin/app-keys", { headers: engineer.headers }), none)).status).toBe(403);
  for (const body of [{ app: "Shop!", scopes: ["requests:create"] }, { app: "shop", scopes: [] }, { app: "shop", scopes: ["requests:delete"] }, { app: "shop" }]) {
    const refused = await createKeyRoute(post("/api/admin/app-keys", body, admin.headers), none);
    expect(refused.status, JSON.stringify(body)).toBe(400);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
  }

  const created = await createKeyRoute(post("/api/admin/app-keys", { app: "shop", scopes: ["requests:read", "requests:create"] }, admin.headers), none);
  expect(created.status).toBe(201);
  const key = (await created.json()) as { id: string; key: string; app: string; scopes: string[] };
  expect(key).toMatchObject({ app: "shop", scopes: ["requests:create", "requests:read"] });
  expect(key.key).toMatch(/^fl_app_[A-Za-z0-9_-]{43}$/);
  const { rows: stored } = await db.pool.query<{ row: string }>("SELECT row_to_json(app_key)::text AS row FROM app_key");
  expect(stored.map((row) => row.row).join()).not.toContain(key.key.slice("fl_app_".length));

  const listed = await (await listKeysRoute(new Request("http://127.0.0.1:3000/api/admin/app-keys", { headers: admin.headers }), none)).text();
  expect(listed).toContain('"app":"shop"');
  expect(listed).not.toContain(key.key);

  const client = createClient({ url: "http://fenceline.test", apiKey: key.key, fetch: routeFetch });
  const input = { recipient: "ada@example.test", message: "hi", deliverVia: "idempotent" } as const;
  const request = await client.requests.create<DeliveryWorkflow>("delivery", input);
  expect(request.status).toBe("active");

  const revoked = await revokeKeyRoute(post(`/api/admin/app-keys/${key.id}/revoke`, {}, admin.headers), { params: Promise.resolve({ id: key.id }) });
  expect(await revoked.json()).toMatchObject({ app: "shop", revokedBy: admin.email });
  await expect(client.requests.get(request.id)).rejects.toBeInstanceOf(UnauthorizedError);
  await expect(client.requests.create<DeliveryWorkflow>("delivery", input)).rejects.toBeInstanceOf(UnauthorizedError);

  const unknown = await revokeKeyRoute(post("/api/admin/app-keys/999999/revoke", {}, admin.headers), { params: Promise.resolve({ id: "999999" }) });
  expect(unknown.status).toBe(404);

  const { rows: audit } = await db.pool.query<{ actor: string; action: string }>("SELECT actor, action FROM audit_log WHERE subject_type = 'app_key' ORDER BY id");
  expect(audit).toEqual([
    { actor: admin.email, action: "app_key.created" },
    { actor: admin.email, action: "app_key.revoked" },
  ]);
});

test("the database takes every scope the code knows, and no other", async ({ db }) => {
  const key = await createAppKey(db.pool, "every-scope", APP_KEY_SCOPES, "admin@test");
  expect([...key.scopes].sort()).toEqual([...APP_KEY_SCOPES].sort());
  await expect(db.pool.query(`UPDATE app_key SET scopes = scopes || '{requests:everything}' WHERE app = 'every-scope'`)).rejects.toThrow(/app_key_scopes_known/);
});
