/**
 * `npm start` in the cluster shape (decision 016): two web replicas behind haproxy (round robin),
 * PgBouncer in transaction mode in front of PostgreSQL, an HTTP worker through the balancer.
 * Every answer names the replica that gave it (x-fenceline-replica). The first check lets round
 * robin choose; the others name the replica of each call in the same header and alternate, so
 * each holds only if the state lives in the database:
 *
 * - a staff session signed in on one replica is recognised by both;
 * - the per-account sign-in limit (5 failures) is reached after 5 failures spread over both;
 * - an idempotency key used on one replica returns the same request on the other;
 * - a review case resolved on one replica reads resolved on the other, which refuses a second,
 *   different resolution;
 * - a worker's session, registered through the balancer, answers heartbeats on both, and the
 *   worker completes requests through the balancer and the pooler (named statements sent
 *   unnamed, LISTEN on the direct connection).
 *
 * Needs Debian's haproxy and pgbouncer (.ci/run installs them).
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePortRun } from "@/lib/net/free-port";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";
import { HAPROXY, PGBOUNCER } from "./cluster";

const DEMO_PASSWORD = "cluster-scenario-password-0123";
const WORKER_TOKEN = "cluster-scenario-worker-token-0123456789abcdef";
const API_KEY = "fl_app_cluster-scenario-app-key-0123456789abcdef";
const START_TIMEOUT_MS = 300_000;
const installed = existsSync(HAPROXY) && existsSync(PGBOUNCER);

let app: Spawned;
let base: string;
let sessionId: string;

type Answer = { status: number; replica: string; body: Record<string, unknown> };

/** Through the balancer; `on` names the replica that must answer (haproxy's use-server). */
async function call(method: string, path: string, { headers = {}, body, on }: { headers?: Record<string, string>; body?: unknown; on?: number } = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(on === undefined ? {} : { "x-fenceline-replica": `web-${on}` }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (on !== undefined) expect(response.headers.get("x-fenceline-replica")).toBe(`web-${on}`);
  return { status: response.status, replica: response.headers.get("x-fenceline-replica") ?? "none", body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function signIn(role: string, forwardedFor: string): Promise<string> {
  const response = await fetch(`${base}/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ email: `${role}@fenceline.test`, password: DEMO_PASSWORD }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response.headers.getSetCookie().map((header) => header.split(";")[0]).join("; ");
}

const replicasOf = (answers: readonly Answer[]) => new Set(answers.map((answer) => answer.replica));

beforeAll(async () => {
  if (!installed) return;
  // Each replica listens on the port after the last: a service of the machine may hold one.
  const port = await freePortRun();
  const replicaPort = await freePortRun(2, [port]);
  const poolerPort = await freePortRun(1, [port, replicaPort, replicaPort + 1]);
  base = `http://127.0.0.1:${port}`;
  app = spawnNodeProcess("npm-start", "lib/cli/start.ts", {
    PORT: String(port),
    FENCELINE_WEB_REPLICAS: "2",
    FENCELINE_REPLICA_PORT: String(replicaPort),
    FENCELINE_POOLER: "pgbouncer",
    FENCELINE_POOLER_PORT: String(poolerPort),
    FENCELINE_WORKER_TRANSPORT: "http",
    FENCELINE_WORKERS: "1",
    FENCELINE_RELAYS: "0",
    FENCELINE_WORKER_TOKEN: WORKER_TOKEN,
    FENCELINE_API_KEY: API_KEY,
    FENCELINE_DATABASE: "cluster_scenario",
    FENCELINE_FRESH_DATABASE: "1",
    FENCELINE_DEMO: "sign-ins",
    DESTINATION_PORT: "0",
    FENCELINE_DEMO_PASSWORD: DEMO_PASSWORD,
  });
  const ready = /FENCELINE_WORKER_READY (\S+)/;
  sessionId = ready.exec(await app.waitForLine(ready, START_TIMEOUT_MS))![1]!;
  await app.waitForLine(/the dashboard is ready at/, START_TIMEOUT_MS);
}, START_TIMEOUT_MS);

afterAll(async () => {
  if (app?.alive) app.process.kill("SIGTERM");
  await app?.exited;
});

describe.skipIf(!installed)("two web replicas behind haproxy, PgBouncer in transaction mode", () => {
  test("the balancer alternates replicas, and a staff session works on both", async () => {
    const cookie = await signIn("support", "10.9.0.1");
    const answers = [];
    // The worker's calls interleave with these, so round robin need not alternate them strictly.
    for (let i = 0; i < 10; i += 1) answers.push(await call("GET", "/api/session", { headers: { cookie } }));
    expect(replicasOf(answers)).toEqual(new Set(["web-1", "web-2"]));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ email: "support@fenceline.test" });
    }
  });

  test("the per-account sign-in limit counts failures on both replicas", async () => {
    const failures: Answer[] = [];
    // A new address each time: only the account's limit (5 failures) is in play.
    for (let i = 0; i < 5; i += 1) {
      failures.push(await call("POST", "/api/session", { headers: { "x-forwarded-for": `10.8.0.${i}` }, body: { email: "admin@fenceline.test", password: `guess ${i}` }, on: (i % 2) + 1 }));
    }
    expect(failures.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
    expect(replicasOf(failures)).toEqual(new Set(["web-1", "web-2"]));
    const limited = [];
    for (let i = 0; i < 2; i += 1) {
      limited.push(await call("POST", "/api/session", { headers: { "x-forwarded-for": `10.7.0.${i}` }, body: { email: "admin@fenceline.test", password: DEMO_PASSWORD }, on: i + 1 }));
    }
    expect(limited.map((answer) => answer.status)).toEqual([429, 429]);
    expect(replicasOf(limited)).toEqual(new Set(["web-1", "web-2"]));
  });

  test("an idempotency key returns the same request whichever replica answers, and the worker completes it", async () => {
    const headers = { authorization: `Bearer ${API_KEY}`, "idempotency-key": "cluster-scenario-order-1" };
    const body = { kind: "delivery", input: { recipient: "ada@example.test", message: "Through the balancer", deliverVia: "idempotent" } };
    let first: Answer | undefined;
    // The worker registers the kind a moment after the web app answers.
    await expect.poll(async () => (first = await call("POST", "/api/requests", { headers, body, on: 1 })).status, { timeout: 30_000 }).toBe(201);
    const repeats = [await call("POST", "/api/requests", { headers, body, on: 2 }), await call("POST", "/api/requests", { headers, body, on: 1 })];
    expect(replicasOf(repeats)).toEqual(new Set(["web-1", "web-2"]));
    for (const repeat of repeats) {
      expect(repeat.status).toBe(200);
      expect(repeat.body.id).toBe(first!.body.id);
    }
    const read = { headers: { authorization: `Bearer ${API_KEY}` } };
    await expect.poll(async () => (await call("GET", `/api/requests/${String(first!.body.id)}`, read)).body.status, { timeout: 60_000 }).toBe("completed");
  });

  test("a worker's session answers on both replicas", async () => {
    const headers = { authorization: `Bearer ${WORKER_TOKEN}` };
    const beats = [];
    for (let i = 0; i < 4; i += 1) beats.push(await call("POST", "/api/worker/heartbeat", { headers, body: { sessionId }, on: (i % 2) + 1 }));
    expect(replicasOf(beats)).toEqual(new Set(["web-1", "web-2"]));
    for (const beat of beats) expect(beat).toMatchObject({ status: 200, body: { alive: true } });
  });

  test("a review case resolved on one replica is resolved on the other, which refuses a different resolution", async () => {
    const engineer = await signIn("engineer", "10.9.0.2");
    const support = await signIn("support", "10.9.0.3");
    expect((await call("PUT", "/api/lab/faults", { headers: { cookie: engineer }, body: { kinds: { opaque: { dropResponseRate: 1 } } } })).status).toBe(200);
    const created = await call("POST", "/api/requests", {
      headers: { authorization: `Bearer ${API_KEY}` },
      body: { kind: "delivery", input: { recipient: "grace@example.test", message: "Lost answer", deliverVia: "opaque" } },
    });
    expect(created.status).toBe(201);
    type Case = { id: string; version: number; workflowId: string };
    let open: Case | undefined;
    await expect
      .poll(
        async () => {
          const page = await call("GET", "/api/review", { headers: { cookie: support } });
          open = (page.body.items as Case[]).find((item) => item.workflowId === created.body.id);
          return open !== undefined;
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    await call("PUT", "/api/lab/faults", { headers: { cookie: engineer }, body: {} });

    const resolution = { resolution: "confirm_delivered", version: open!.version, externalReference: "opq-cluster-0001", note: "" };
    const resolved = await call("POST", `/api/review/${open!.id}/resolution`, { headers: { cookie: support }, body: resolution, on: 1 });
    expect(resolved.status).toBe(200);
    const after = [
      await call("GET", `/api/review/${open!.id}`, { headers: { cookie: support }, on: 2 }),
      await call("POST", `/api/review/${open!.id}/resolution`, {
        headers: { cookie: support },
        on: 2,
        body: { resolution: "abandon", version: open!.version, customerReason: "x", note: "a second opinion" },
      }),
    ];
    expect(replicasOf([resolved, ...after])).toEqual(new Set(["web-1", "web-2"]));
    expect(JSON.stringify(after[0]!.body)).toContain("confirm_delivered");
    expect(after[1]!.status).toBe(409);
  });
});
