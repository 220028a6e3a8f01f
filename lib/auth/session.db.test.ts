/**
 * Staff sign-in through its routes: a session cookie that is httpOnly and SameSite=Lax, the same
 * 401 for a wrong email or password, 429 with Retry-After after repeated failures on one account,
 * an expired session that counts as none, sign-out that ends the session; and the admin API,
 * whose every account and token change lands in the audit log, refused to anyone but admins.
 */
import { afterAll, expect } from "vitest";
import { DELETE as signOutRoute, GET as whoRoute, POST as signInRoute } from "@/app/api/session/route";
import { GET as listAccountsRoute, POST as createAccountRoute } from "@/app/api/admin/accounts/route";
import { PUT as setRolesRoute } from "@/app/api/admin/accounts/[id]/roles/route";
import { POST as createTokenRoute } from "@/app/api/admin/worker-tokens/route";
import { POST as revokeTokenRoute } from "@/app/api/admin/worker-tokens/[id]/revoke/route";
import { GET as auditRoute } from "@/app/api/audit/route";
import { pool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { createAccount } from "./accounts";
import { signedIn } from "./test-support";

afterAll(async () => {
  await pool().end();
});

const none = { params: Promise.resolve({}) };
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:3000${url}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

test("sign in sets an httpOnly SameSite=Lax session cookie; who-am-I and sign-out follow it; an expired session is none", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  await createAccount(db.pool, { email: "Ada@Example.test", name: "Ada", password: "correct horse battery", roles: ["support"] }, "test");
  const response = await signInRoute(post("/api/session", { email: "ada@example.test", password: "correct horse battery" }, { "x-forwarded-for": "10.0.0.1" }), none);
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ email: "ada@example.test", roles: ["support"] });
  const setCookie = response.headers.getSetCookie().find((header) => header.startsWith("fenceline.session_token="))!;
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Lax/i);
  const cookie = setCookie.split(";")[0]!;

  const who = await whoRoute(new Request("http://127.0.0.1:3000/api/session", { headers: { cookie } }), none);
  expect(await who.json()).toMatchObject({ email: "ada@example.test" });

  await db.pool.query(`UPDATE auth_session SET expires_at = now() - interval '1 ms'`);
  expect((await whoRoute(new Request("http://127.0.0.1:3000/api/session", { headers: { cookie } }), none)).status).toBe(401);

  const again = await signInRoute(post("/api/session", { email: "ada@example.test", password: "correct horse battery" }, { "x-forwarded-for": "10.0.0.1" }), none);
  const second = again.headers.getSetCookie().find((header) => header.startsWith("fenceline.session_token="))!.split(";")[0]!;
  const out = await signOutRoute(new Request("http://127.0.0.1:3000/api/session", { method: "DELETE", headers: { cookie: second } }), none);
  expect(out.status).toBe(204);
  expect((await whoRoute(new Request("http://127.0.0.1:3000/api/session", { headers: { cookie: second } }), none)).status).toBe(401);
});

test("a wrong email and a wrong password get the same 401; five failures on one account are followed by 429 with Retry-After", async () => {
  const wrongEmail = await signInRoute(post("/api/session", { email: "nobody@example.test", password: "whatever it is" }, { "x-forwarded-for": "10.0.0.2" }), none);
  const wrongPassword = await signInRoute(post("/api/session", { email: "ada@example.test", password: "wrong wrong wrong" }, { "x-forwarded-for": "10.0.0.2" }), none);
  expect([wrongEmail.status, wrongPassword.status]).toEqual([401, 401]);
  expect((await wrongEmail.json()).detail).toBe((await wrongPassword.json()).detail);
  // Four more failures from other addresses exhaust the account's bucket of five.
  for (let i = 0; i < 4; i += 1) {
    expect((await signInRoute(post("/api/session", { email: "ada@example.test", password: `guess ${i}` }, { "x-forwarded-for": `10.1.0.${i}` }), none)).status).toBe(401);
  }
  const limited = await signInRoute(post("/api/session", { email: "ada@example.test", password: "correct horse battery" }, { "x-forwarded-for": "10.2.0.1" }), none);
  expect(limited.status).toBe(429);
  expect(limited.headers.get("content-type")).toBe("application/problem+json");
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  const crossSite = await signInRoute(post("/api/session", { email: "x@example.test", password: "y" }, { origin: "https://evil.example" }), none);
  expect(crossSite.status).toBe(403);
});

test("admins create accounts, change roles and manage worker tokens, each audited; others are refused", async ({ db }) => {
  const admin = await signedIn(db.pool, ["admin"]);
  const engineer = await signedIn(db.pool, ["engineer"]);
  const support = await signedIn(db.pool, ["support"]);
  const body = { email: "new@example.test", name: "New", password: "a long enough password", roles: ["support"] };
  expect((await createAccountRoute(post("/api/admin/accounts", body, engineer.headers), none)).status).toBe(403);
  expect((await listAccountsRoute(new Request("http://127.0.0.1:3000/api/admin/accounts", { headers: support.headers }), none)).status).toBe(403);
  expect((await createTokenRoute(post("/api/admin/worker-tokens", { workerName: "w" }, engineer.headers), none)).status).toBe(403);

  const created = await createAccountRoute(post("/api/admin/accounts", body, admin.headers), none);
  expect(created.status).toBe(201);
  const account = (await created.json()) as { id: string };
  expect((await createAccountRoute(post("/api/admin/accounts", body, admin.headers), none)).status).toBe(409);
  const roles = await setRolesRoute(
    new Request(`http://127.0.0.1:3000/api/admin/accounts/${account.id}/roles`, { method: "PUT", headers: { "content-type": "application/json", ...admin.headers }, body: JSON.stringify({ roles: ["engineer", "support"] }) }),
    { params: Promise.resolve({ id: account.id }) },
  );
  expect(roles.status).toBe(204);

  const token = (await (await createTokenRoute(post("/api/admin/worker-tokens", { workerName: "edge-7" }, admin.headers), none)).json()) as { id: string; token: string };
  expect(token.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const revoked = await revokeTokenRoute(post(`/api/admin/worker-tokens/${token.id}/revoke`, {}, admin.headers), { params: Promise.resolve({ id: token.id }) });
  expect(await revoked.json()).toMatchObject({ workerName: "edge-7", revokedBy: admin.email });

  expect((await auditRoute(new Request("http://127.0.0.1:3000/api/audit", { headers: support.headers }), none)).status).toBe(403);
  const audit = (await (await auditRoute(new Request("http://127.0.0.1:3000/api/audit?limit=4", { headers: engineer.headers }), none)).json()) as {
    items: { actor: string; action: string; before: unknown; after: unknown }[];
  };
  expect(audit.items.map((entry) => [entry.actor, entry.action])).toEqual([
    [admin.email, "worker_token.revoked"],
    [admin.email, "worker_token.created"],
    [admin.email, "account.roles_changed"],
    [admin.email, "account.created"],
  ]);
  expect(audit.items[2]).toMatchObject({ before: { roles: ["support"] }, after: { roles: ["engineer", "support"] } });
  expect(JSON.stringify(audit.items)).not.toContain(body.password);
});
