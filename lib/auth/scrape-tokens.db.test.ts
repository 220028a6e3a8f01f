/**
 * A Prometheus server reads the exposition with a scrape token an admin created, and with that
 * token alone reads nothing else: the token is refused by every other door (engineer API, app
 * API, worker protocol), no other credential is accepted as a scrape token, revoking it refuses
 * the next scrape, and an engineer's session keeps working. Tokens are stored only as their hash
 * and every creation and revocation is in the audit log.
 */
import { afterAll, describe, expect } from "vitest";
import { POST as revokeRoute } from "@/app/api/admin/scrape-tokens/[id]/revoke/route";
import { GET as listTokensRoute, POST as createTokenRoute } from "@/app/api/admin/scrape-tokens/route";
import { GET as metricsRoute } from "@/app/api/metrics/route";
import { GET as prometheusRoute } from "@/app/api/metrics/prometheus/route";
import { GET as listStepsRoute } from "@/app/api/steps/route";
import { GET as auditRoute } from "@/app/api/audit/route";
import { createAppKey } from "@/lib/auth/app-keys";
import { signedIn, type SignedIn } from "@/lib/auth/test-support";
import { createWorkerToken } from "@/lib/auth/worker-tokens";
import { pool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { routeFetch } from "@/lib/requests/test-support";
import { PROMETHEUS_CONTENT_TYPE } from "@/lib/metrics/prometheus";

const BASE = "http://fenceline.test";
const noParams = { params: Promise.resolve({}) };

afterAll(async () => {
  await pool().end();
});

let admin: SignedIn;
let engineer: SignedIn;
let prepared: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (prepared ??= (async () => {
    process.env.DATABASE_URL = db.url;
    delete process.env.FENCELINE_MODE;
    admin = await signedIn(db.pool, ["admin"], "admin");
    engineer = await signedIn(db.pool, ["engineer"], "engineer");
  })());

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const scrape = (headers: Record<string, string>) => prometheusRoute(new Request(`${BASE}/api/metrics/prometheus`, { headers }), noParams);

/** Creates a scrape token through the admin API, as the /admin page does. */
async function createThroughApi(name: string): Promise<{ id: string; token: string }> {
  const response = await createTokenRoute(
    new Request(`${BASE}/api/admin/scrape-tokens`, { method: "POST", headers: { ...admin.headers, origin: BASE, "content-type": "application/json" }, body: JSON.stringify({ name }) }),
    noParams,
  );
  expect(response.status).toBe(201);
  return response.json();
}

describe("scraping with a token", () => {
  test("an admin creates a token, shown once; it reads the exposition and stamps its last use", async ({ db }) => {
    const created = await createThroughApi("prometheus-main");
    expect(created.token).toMatch(/^fl_scrape_[A-Za-z0-9_-]{43}$/);

    const response = await scrape(bearer(created.token));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
    const text = await response.text();
    expect(text).toContain("# TYPE fenceline_churn_lease_acquisitions_total counter");
    expect(text).toContain("fenceline_uncertainty_open_review_cases");

    const listed = await (await listTokensRoute(new Request(`${BASE}/api/admin/scrape-tokens`, { headers: admin.headers }), noParams)).json();
    const record = listed.items.find((item: { id: string }) => item.id === created.id);
    expect(record).toMatchObject({ name: "prometheus-main", createdBy: admin.email, revokedAt: null, lastUsedAt: expect.any(String) });
    expect(record).not.toHaveProperty("token");
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const { rows } = await db.pool.query("SELECT token_sha256 FROM scrape_token WHERE id = $1", [created.id]);
    expect(rows[0].token_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].token_sha256).not.toContain(created.token);
  });

  test("a revoked token is refused at its next scrape, with a problem; the change is audited", async ({ db }) => {
    const created = await createThroughApi("prometheus-old");
    expect((await scrape(bearer(created.token))).status).toBe(200);

    const revoked = await revokeRoute(
      new Request(`${BASE}/api/admin/scrape-tokens/${created.id}/revoke`, { method: "POST", headers: { ...admin.headers, origin: BASE } }),
      { params: Promise.resolve({ id: created.id }) },
    );
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: created.id, revokedBy: admin.email, revokedAt: expect.any(String) });

    const refused = await scrape(bearer(created.token));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="fenceline-metrics"');
    expect((await refused.json()).code).toBe("unauthorized");

    const { rows } = await db.pool.query("SELECT action, actor, after FROM audit_log WHERE subject_type = 'scrape_token' AND subject_id = $1 ORDER BY id", [created.id]);
    expect(rows.map((row) => row.action)).toEqual(["scrape_token.created", "scrape_token.revoked"]);
    expect(rows.every((row) => row.actor === admin.email)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(created.token);
  });

  test("an engineer's session keeps working; a session without technical:read does not", async ({ db }) => {
    expect((await scrape(engineer.headers)).status).toBe(200);
    const support = await signedIn(db.pool, ["support"], "support");
    expect((await scrape(support.headers)).status).toBe(403);
    expect((await scrape({})).status).toBe(401);
  });

  test("only an admin creates or revokes scrape tokens", async () => {
    const refused = await createTokenRoute(
      new Request(`${BASE}/api/admin/scrape-tokens`, { method: "POST", headers: { ...engineer.headers, origin: BASE, "content-type": "application/json" }, body: JSON.stringify({ name: "sneaky" }) }),
      noParams,
    );
    expect(refused.status).toBe(403);
    expect((await listTokensRoute(new Request(`${BASE}/api/admin/scrape-tokens`, { headers: engineer.headers }), noParams)).status).toBe(403);
  });
});

// Four credentials, four doors: none opens another's.
describe("credentials don't cross", () => {
  test("a scrape token opens no other door: not the engineer API, not the app API, not the worker protocol, not the audit log", async ({ db }) => {
    const { token } = await createThroughApi("prometheus-probe");
    expect((await metricsRoute(new Request(`${BASE}/api/metrics`, { headers: bearer(token) }), noParams)).status).toBe(401);
    expect((await listStepsRoute(new Request(`${BASE}/api/steps`, { headers: bearer(token) }), noParams)).status).toBe(401);
    expect((await auditRoute(new Request(`${BASE}/api/audit`, { headers: bearer(token) }), noParams)).status).toBe(401);
    expect((await listTokensRoute(new Request(`${BASE}/api/admin/scrape-tokens`, { headers: bearer(token) }), noParams)).status).toBe(401);
    const asApp = await routeFetch(`${BASE}/api/requests`, { headers: bearer(token) });
    expect(asApp.status).toBe(401);
    const asWorker = await routeFetch(`${BASE}/api/worker/register-session`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ definitions: { workflows: [], adapters: [] } }),
    });
    expect(asWorker.status).toBe(401);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM worker_session WHERE transport = 'http'");
    expect(rows[0].n).toBe(0);
  });

  test("no other credential scrapes: not a worker token, not an app key, not a forged token; a bearer is judged alone, even beside a session", async ({ db }) => {
    const worker = await createWorkerToken(db.pool, "scrape-intruder", "admin@test");
    const app = await createAppKey(db.pool, "scrape-intruder", ["requests:read"], "admin@test");
    for (const credential of [worker.token, app.key, `fl_scrape_${"A".repeat(43)}`, "not-even-a-token"]) {
      const refused = await scrape(bearer(credential));
      expect(refused.status).toBe(401);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await scrape({ ...engineer.headers, ...bearer(worker.token) })).status).toBe(401);
  });
});
