/**
 * The coordinator conformance suite over the HTTP worker protocol (lib/api/worker-protocol.ts
 * served on a plain node:http server), plus what only HTTP has: worker tokens (hashed, revocable,
 * one worker identity each), sessions that must be registered through the protocol by that worker, transport failures that are not lost authority, and
 * a real Worker running a workflow end to end over HTTP.
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Pool } from "pg";
import { afterAll, describe, expect, onTestFinished, vi } from "vitest";
import { claimResponse, commitReceiptsAndClaimResponse } from "@/lib/api/contract/worker";
import { MAX_BODY_BYTES } from "@/lib/api/http";
import { closeWorkerProtocol, handleWorkerProtocol, workerProtocolListener } from "@/lib/api/worker-protocol";
import { createWorkerToken, installWorkerToken, revokeWorkerToken } from "@/lib/auth/worker-tokens";
import { createPool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { AuthorityLostError } from "@/lib/engine/errors";
import { registerSession } from "@/lib/engine/session";
import { createSingleStepWorkflows, createStepClass, servedFor, truncateEngineTables } from "@/lib/engine/test-support";
import { AttemptRun, AuthorityUncertainError } from "./attempt-run";
import { coordinatorConformance } from "./coordinator.conformance";
import { directCoordinator } from "./direct-coordinator";
import { spawnNodeProcess, spawnWorker, stopAll } from "./test-process";
import { httpCoordinator, WorkerTransportError } from "./http-coordinator";
import { claimedStepsOf, receiptResultsOf, WireCheckError } from "./wire-checks";
import { createFastClass, sleepThenDone } from "./test-definitions";
import { createRequestsOf, TEST_PURE_REGISTRATION } from "./test-support";
import { Worker } from "./worker";

const TOKEN = "conformance-token-0123456789";

let served: { pool: Pool; server: Server; baseUrl: string } | null = null;

/** One protocol server per test file, on a free port, over the file's database. */
async function serve(db: TestDatabase): Promise<string> {
  if (served?.pool === db.pool) return served.baseUrl;
  await installWorkerToken(db.pool, "conformance", TOKEN, "test setup");
  const server = createServer(workerProtocolListener(db.pool));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  served = { pool: db.pool, server, baseUrl: `http://127.0.0.1:${port}` };
  return served.baseUrl;
}

afterAll(async () => {
  if (!served) return;
  const { server, pool } = served;
  served = null;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await closeWorkerProtocol(pool);
});

coordinatorConformance("http", async (db) => httpCoordinator({ baseUrl: await serve(db), token: TOKEN, timeoutMs: 5_000 }));

describe("the HTTP worker protocol", () => {
  test.beforeEach(async ({ db }) => {
    await truncateEngineTables(db.pool);
  });

  test("refuses a missing or wrong token with 401 problem+json, surfaced as a plain Error", async ({ db }) => {
    const baseUrl = await serve(db);
    for (const authorization of [undefined, "Bearer wrong-token", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const response = await fetch(`${baseUrl}/api/worker/register-session`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({ status: 401, code: "unauthorized" });
    }
    const wrong = httpCoordinator({ baseUrl, token: "wrong-token" });
    const refused = await wrong.registerSession(TEST_PURE_REGISTRATION).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkerTransportError);
    expect(refused).not.toBeInstanceOf(AuthorityLostError);
    expect(refused).toMatchObject({ status: 401 });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM worker_session");
    expect(rows[0].n).toBe(0);
  });

  test("refuses a session that was not registered through the protocol (403), and bad bodies (400)", async ({ db }) => {
    const baseUrl = await serve(db);
    const directSession = await registerSession(db.pool, "direct");
    const coordinator = httpCoordinator({ baseUrl, token: TOKEN });
    await expect(coordinator.heartbeat(directSession)).rejects.toMatchObject({ status: 403 });
    await expect(coordinator.claim(directSession, servedFor("pure"), 1)).rejects.toMatchObject({ status: 403 });

    const post = (operation: string, body: string) =>
      fetch(`${baseUrl}/api/worker/${operation}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body });
    const invalid = await post("claim", JSON.stringify({ sessionId: "not-a-uuid", adapters: [], limit: -1 }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ code: "invalid-request", issues: expect.any(Array) });
    expect((await post("no-such-operation", "{}")).status).toBe(404);
    const term = await post("begin-invocation", JSON.stringify({ lease: { stepId: directSession, fencingTerm: "1.5", sessionId: directSession } }));
    expect(term.status).toBe(400);
  });

  test("the node:http listener refuses what is not the protocol with problem+json: unknown operation 404, wrong method 405, bad content type 415, oversized body 413, bad JSON 400", async ({ db }) => {
    const baseUrl = await serve(db);
    const send = async (path: string, init: { method?: string; contentType?: string; body?: string } = {}) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method: init.method ?? "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": init.contentType ?? "application/json" },
        body: init.method === "GET" ? undefined : (init.body ?? "{}"),
      });
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      return { status: response.status, allow: response.headers.get("allow"), problem: (await response.json()) as { code: string; status: number } };
    };
    expect(await send("/api/worker/no-such-operation")).toMatchObject({ status: 404, problem: { code: "not-found", status: 404 } });
    expect(await send("/elsewhere")).toMatchObject({ status: 404 });
    expect(await send("/api/worker/claim", { method: "GET" })).toMatchObject({ status: 405, allow: "POST", problem: { code: "method-not-allowed" } });
    expect(await send("/api/worker/claim", { contentType: "text/plain" })).toMatchObject({ status: 415, problem: { code: "unsupported-media-type" } });
    expect(await send("/api/worker/claim", { body: "x".repeat(MAX_BODY_BYTES + 1) })).toMatchObject({ status: 413, problem: { code: "payload-too-large" } });
    expect(await send("/api/worker/claim", { body: "{not json" })).toMatchObject({ status: 400, problem: { code: "invalid-json" } });
    expect(await send("/api/worker/claim?x=1", { body: JSON.stringify({ sessionId: "nope", limit: 1 }) })).toMatchObject({ status: 400, problem: { code: "invalid-request" } });
  });

  test("the Fetch API form (the Next route's) answers as the listener does", async ({ db }) => {
    await serve(db);
    const coordinator = httpCoordinator({ baseUrl: served!.baseUrl, token: TOKEN });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const ask = async (path: string, init: RequestInit) => {
      const response = await handleWorkerProtocol(new Request(`http://fenceline.test${path}`, init), db.pool);
      return { status: response.status, body: response.status === 204 ? null : ((await response.json()) as unknown) };
    };
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    expect(await ask("/api/worker/heartbeat", { method: "POST", headers, body: JSON.stringify({ sessionId }) })).toEqual({ status: 200, body: { alive: true } });
    expect(await ask("/api/worker/heartbeat", { method: "PUT", headers, body: "{}" })).toMatchObject({ status: 405 });
    expect(await ask("/api/worker/nothing", { method: "POST", headers, body: "{}" })).toMatchObject({ status: 404 });
    expect(await ask("/api/worker/heartbeat", { method: "POST", headers, body: "x".repeat(MAX_BODY_BYTES + 1) })).toMatchObject({ status: 413 });
    expect(await ask("/api/worker/heartbeat", { method: "POST", headers: { ...headers, authorization: "Bearer nope" }, body: "{}" })).toMatchObject({ status: 401 });
  });

  test("the answers the server writes without zod match the protocol's full schemas, and the client's checks refuse a malformed one", async ({ db }) => {
    const baseUrl = await serve(db);
    await createSingleStepWorkflows(db.pool, 3, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const coordinator = httpCoordinator({ baseUrl, token: TOKEN });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const post = async (operation: string, body: unknown) => {
      const response = await fetch(`${baseUrl}/api/worker/${operation}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as unknown;
    };
    // Parsing strips what the schema does not name: equal means nothing more and nothing less.
    const claimedRaw = await post("claim", { sessionId, limit: 2 });
    const claimed = claimResponse.parse(claimedRaw);
    expect(claimed).toEqual(claimedRaw);
    expect(claimed.steps).toHaveLength(2);
    expect(claimedStepsOf(claimed)).toEqual(claimed.steps.map((step) => expect.objectContaining({ stepId: step.stepId, fencingTerm: BigInt(step.fencingTerm) })));
    const [done, stale] = claimed.steps;
    const conclusion = { kind: "no_action_needed", reason: "test" };
    const bothRaw = await post("commit-receipts-and-claim", {
      sessionId,
      receipts: [
        { stepId: done!.stepId, fencingTerm: done!.fencingTerm, conclusion },
        { stepId: stale!.stepId, fencingTerm: String(BigInt(stale!.fencingTerm) + 1n), conclusion },
      ],
      claimLimit: 5,
    });
    const both = commitReceiptsAndClaimResponse.parse(bothRaw);
    expect(both).toEqual(bothRaw);
    expect(both.steps).toHaveLength(1);
    const results = receiptResultsOf(both);
    expect(results[0]).toMatchObject({ committed: true });
    expect(results[1]).toMatchObject({ committed: false, error: expect.any(AuthorityLostError) });

    const step = claimed.steps[0]!;
    for (const broken of [{ ...step, fencingTerm: "1.5" }, { ...step, mode: "guess" }, { ...step, expiresAt: "soon" }, { ...step, attemptBudget: "3" }, { ...step, stepId: undefined }, { ...step, dependencyReferences: { first: 7 } }]) {
      expect(() => claimedStepsOf({ steps: [broken] })).toThrow(WireCheckError);
    }
    // A server older than dependencies' references sends none: the step reads none.
    expect(claimedStepsOf({ steps: [{ ...step, dependencyReferences: undefined }] })[0]!.dependencyReferences).toEqual({});
    expect(() => claimedStepsOf({ steps: null })).toThrow(WireCheckError);
    expect(() => receiptResultsOf({ results: [{ stepId: step.stepId, committed: "yes" }] })).toThrow(WireCheckError);
    expect(() => receiptResultsOf({ results: [{ stepId: step.stepId, committed: false, error: { ...results[1], code: "authority-lost", reason: "bored" } }] })).toThrow(WireCheckError);
  });

  test("a revoked worker token can no longer renew, nor register a session; the revocation is audited", async ({ db }) => {
    const baseUrl = await serve(db);
    await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const issued = await createWorkerToken(db.pool, "revocable", "admin@test");
    const { rows: stored } = await db.pool.query("SELECT token_sha256 FROM worker_token WHERE id = $1", [issued.id]);
    expect(stored[0].token_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0].token_sha256).not.toContain(issued.token);

    const coordinator = httpCoordinator({ baseUrl, token: issued.token });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const [claimed] = await coordinator.claim(sessionId, servedFor("pure"), 1);
    const lease = { stepId: claimed!.stepId, fencingTerm: claimed!.fencingTerm, sessionId, checkpointVersion: claimed!.checkpointVersion };
    expect((await coordinator.renew(sessionId, [lease]))[0]).toMatchObject({ renewed: true });

    await revokeWorkerToken(db.pool, issued.id, "admin@test");
    const refused = await coordinator.renew(sessionId, [lease]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkerTransportError);
    expect(refused).toMatchObject({ status: 401 });
    await expect(coordinator.registerSession(TEST_PURE_REGISTRATION)).rejects.toMatchObject({ status: 401 });
    const { rows: audit } = await db.pool.query("SELECT action, actor FROM audit_log WHERE subject_id = $1 ORDER BY id", [issued.id]);
    expect(audit).toEqual([{ action: "worker_token.created", actor: "admin@test" }, { action: "worker_token.revoked", actor: "admin@test" }]);
  });

  test("a token's identity is cached while it is unrevoked, and a revocation announced by another process refuses it as soon as the notice arrives", async ({ db }) => {
    const baseUrl = await serve(db);
    const issued = await createWorkerToken(db.pool, "cached", "admin@test");
    const coordinator = httpCoordinator({ baseUrl, token: issued.token });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    expect(await coordinator.heartbeat(sessionId)).toBe(true);

    // Another process (a second web replica, psql) with its own connection.
    const other = createPool(db.url, { applicationName: "fenceline-test:other-replica", max: 1 });
    onTestFinished(() => other.end());
    // Marked revoked without the announcement: the cached identity still answers, so no request
    // pays for a token query; revokeWorkerToken always announces.
    await other.query("UPDATE worker_token SET revoked_at = now(), revoked_by = 'psql' WHERE id = $1::bigint", [issued.id]);
    expect(await coordinator.heartbeat(sessionId)).toBe(true);

    await other.query("SELECT pg_notify('fenceline_worker_token_revoked', $1)", [issued.id]);
    const refusedAfterMs = await vi.waitFor(
      async () => {
        const startedAt = performance.now();
        const refused = await coordinator.heartbeat(sessionId).catch((error: unknown) => error);
        expect(refused).toMatchObject({ status: 401 });
        return performance.now() - startedAt;
      },
      { timeout: 2_000, interval: 5 },
    );
    expect(refusedAfterMs).toBeLessThan(2_000);
    await expect(coordinator.registerSession(TEST_PURE_REGISTRATION)).rejects.toMatchObject({ status: 401 });
  });

  test("a revocation in this process refuses the token on its very next request, even right after a burst of cached requests", async ({ db }) => {
    const baseUrl = await serve(db);
    const issued = await createWorkerToken(db.pool, "burst", "admin@test");
    const coordinator = httpCoordinator({ baseUrl, token: issued.token });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    await Promise.all(Array.from({ length: 20 }, () => coordinator.heartbeat(sessionId)));
    await revokeWorkerToken(db.pool, issued.id, "admin@test");
    await expect(coordinator.heartbeat(sessionId)).rejects.toMatchObject({ status: 401 });
  });

  test("a worker presenting another worker's lease is refused: its session is not the worker's (403), and under its own session the write is a recorded fencing rejection", async ({ db }) => {
    const baseUrl = await serve(db);
    await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const other = await createWorkerToken(db.pool, "other-worker", "admin@test");
    const holder = httpCoordinator({ baseUrl, token: other.token });
    const intruder = httpCoordinator({ baseUrl, token: TOKEN });
    onTestFinished(() => Promise.all([holder.close(), intruder.close()]).then(() => undefined));
    const holderSession = (await holder.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const intruderSession = (await intruder.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const [claimed] = await holder.claim(holderSession, servedFor("pure"), 1);

    const asHolder = { stepId: claimed!.stepId, fencingTerm: claimed!.fencingTerm, sessionId: holderSession };
    await expect(intruder.beginInvocation(asHolder)).rejects.toMatchObject({ status: 403 });
    await expect(intruder.heartbeat(holderSession)).rejects.toMatchObject({ status: 403 });

    const underOwnSession = { ...asHolder, sessionId: intruderSession };
    await expect(intruder.beginInvocation(underOwnSession)).rejects.toMatchObject({ reason: "not_owner" });
    const { rows } = await db.pool.query("SELECT presented_owner, reason::text FROM fencing_rejection WHERE step_id = $1", [claimed!.stepId]);
    expect(rows).toEqual([{ presented_owner: intruderSession, reason: "not_owner" }]);
  });

  test("a transport failure is a plain Error, and during renewal leaves the attempt uncertain, not lost", async ({ db }) => {
    const baseUrl = await serve(db);
    await createStepClass(db.pool, "quick-renew", { leaseTtlMs: 5_000, renewEveryMs: 100, attemptDeadlineMs: 20_000, graceMs: 500 });
    await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "quick-renew" });

    let failRenewals: "reset" | "5xx" | null = null;
    let failWaits = false;
    // A proxy in front of the protocol server that drops connections or answers 502 on demand.
    const flaky = createServer((incoming, outgoing) => {
      const path = incoming.url ?? "/";
      if ((path.endsWith("/wait-for-work") && failWaits) || (path.endsWith("/renew") && failRenewals === "reset")) return void incoming.socket.destroy();
      if (path.endsWith("/renew") && failRenewals === "5xx") return void outgoing.writeHead(502).end("upstream gone");
      const forward = httpRequest(`${baseUrl}${path}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(forward);
    });
    await new Promise<void>((resolve) => flaky.listen(0, "127.0.0.1", resolve));
    onTestFinished(async () => {
      flaky.closeAllConnections();
      await new Promise((resolve) => flaky.close(resolve));
    });
    const coordinator = httpCoordinator({ baseUrl: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`, token: TOKEN });
    onTestFinished(() => coordinator.close());
    const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
    const [claimed] = await coordinator.claim(sessionId, servedFor("pure"), 1);
    const lines: string[] = [];
    const run = new AttemptRun(claimed!, sessionId, coordinator, performance.now(), (line) => lines.push(line));
    onTestFinished(() => run.stop());

    for (const mode of ["reset", "5xx"] as const) {
      failRenewals = mode;
      const renewal = await coordinator.renew(sessionId, [{ ...run.lease, checkpointVersion: run.checkpointVersion }]).catch((error: unknown) => error);
      expect(renewal).toBeInstanceOf(WorkerTransportError);
      expect(renewal).not.toBeInstanceOf(AuthorityLostError);
    }

    failRenewals = "reset";
    run.startRenewing();
    await vi.waitFor(() => expect(lines.some((line) => /unknown outcome/.test(line))).toBe(true), { timeout: 3_000 });
    expect(run.signal.aborted).toBe(false);
    expect(() => run.assertHolding()).toThrow(AuthorityUncertainError);

    failRenewals = null;
    await vi.waitFor(() => expect(() => run.assertHolding()).not.toThrow(), { timeout: 3_000 });
    expect(run.signal.aborted).toBe(false);

    // A long poll that fails costs latency only: the wait is spent locally and never throws.
    failWaits = true;
    const waitStartedAt = performance.now();
    await coordinator.waitForWork(300);
    expect(performance.now() - waitStartedAt).toBeGreaterThanOrEqual(250);

    // Nothing listening at all: still a plain transport error.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const nowhere = httpCoordinator({ baseUrl: `http://127.0.0.1:${closedPort}`, token: TOKEN, timeoutMs: 2_000 });
    const unreachable = await nowhere.renew(sessionId, [{ ...run.lease, checkpointVersion: run.checkpointVersion }]).catch((error: unknown) => error);
    expect(unreachable).toBeInstanceOf(WorkerTransportError);
    expect(unreachable).not.toBeInstanceOf(AuthorityLostError);
    expect(String(unreachable)).toMatch(/ECONNREFUSED/);
  });

  test("a real Worker runs a two-step workflow to completion over HTTP", async ({ db }) => {
    const baseUrl = await serve(db);
    await createFastClass(db.pool);
    const [created] = await createRequestsOf(db.pool, sleepThenDone, [{}]);
    const worker = new Worker({
      coordinator: httpCoordinator({ baseUrl, token: TOKEN }),
      workflows: [sleepThenDone],
      pollIntervalMs: 2_000,
      recoveryIntervalMs: 200,
      shutdownTimeoutMs: 2_000,
      log: () => undefined,
    });
    const sessionId = await worker.start();
    onTestFinished(() => worker.stop());
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [created!.workflowId]);
      expect(rows[0].status).toBe("completed");
    }, { timeout: 10_000 });
    await worker.stop();
    const { rows } = await db.pool.query(
      `SELECT s.name, r.verification_method::text, l.owner_session_id FROM receipt r JOIN step s ON s.id = r.step_id
       JOIN lease l ON l.step_id = r.step_id AND l.fencing_term = r.fencing_term WHERE s.workflow_id = $1 ORDER BY s.position`,
      [created!.workflowId],
    );
    expect(rows.map((r) => r.name)).toEqual(["first", "second"]);
    expect(new Set(rows.map((r) => r.owner_session_id))).toEqual(new Set([sessionId]));
    const session = await db.pool.query("SELECT transport, stopped_at IS NOT NULL AS stopped FROM worker_session WHERE id = $1", [sessionId]);
    expect(session.rows).toEqual([{ transport: "http", stopped: true }]);
  });

  test("the worker process (npm run worker) runs over HTTP with no database URL", { timeout: 60_000 }, async ({ db }) => {
    const baseUrl = await serve(db);
    await createFastClass(db.pool);
    const [created] = await createRequestsOf(db.pool, sleepThenDone, [{}]);
    const child = spawnWorker("", {
      FENCELINE_WORKER_TRANSPORT: "http",
      FENCELINE_COORDINATOR_URL: baseUrl,
      FENCELINE_WORKER_TOKEN: TOKEN,
      FENCELINE_POLL_INTERVAL_MS: "200",
    });
    onTestFinished(() => stopAll([child]));
    const ready = await child.waitForLine(/^FENCELINE_WORKER_READY /);
    expect(ready).toMatch(/transport http serves /);
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [created!.workflowId]);
      expect(rows[0].status).toBe("completed");
    }, { timeout: 20_000 });
    await stopAll([child]);
    const sessionId = ready.split(" ")[1];
    const { rows } = await db.pool.query("SELECT transport, stop_reason FROM worker_session WHERE id = $1", [sessionId]);
    expect(rows).toEqual([{ transport: "http", stop_reason: "SIGTERM" }]);
  });

  test("npm run protocol-server serves the protocol apart from the web app, to a worker process with no database URL", { timeout: 60_000 }, async ({ db }) => {
    await serve(db);
    await createFastClass(db.pool);
    const [created] = await createRequestsOf(db.pool, sleepThenDone, [{}]);
    const server = spawnNodeProcess("protocol-server", "lib/cli/protocol-server.ts", { DATABASE_URL: db.url, FENCELINE_PROTOCOL_PORT: "0" });
    onTestFinished(() => stopAll([server]));
    const url = (await server.waitForLine(/^FENCELINE_PROTOCOL_READY \S+$/)).split(" ")[1]!;
    const refused = await fetch(`${url}/api/worker/heartbeat`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(refused.status).toBe(401);
    const child = spawnWorker("", { FENCELINE_WORKER_TRANSPORT: "http", FENCELINE_COORDINATOR_URL: url, FENCELINE_WORKER_TOKEN: TOKEN, FENCELINE_POLL_INTERVAL_MS: "200" });
    onTestFinished(() => stopAll([child]));
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [created!.workflowId]);
      expect(rows[0].status).toBe("completed");
    }, { timeout: 20_000 });
  });

  test("round trip: the HTTP transport's cost per operation over the direct one (measured, not asserted)", async ({ db }) => {
    const baseUrl = await serve(db);
    const http = httpCoordinator({ baseUrl, token: TOKEN });
    const direct = directCoordinator(db.pool);
    onTestFinished(async () => {
      await Promise.all([http.close(), direct.close()]);
    });
    const median = async (coordinator: typeof http) => {
      const sessionId = (await coordinator.registerSession(TEST_PURE_REGISTRATION)).sessionId;
      const samples: number[] = [];
      for (let i = 0; i < 200; i += 1) {
        const startedAt = performance.now();
        await coordinator.heartbeat(sessionId);
        samples.push(performance.now() - startedAt);
      }
      samples.sort((x, y) => x - y);
      return { p50: samples[100]!, p99: samples[197]! };
    };
    const d = await median(direct);
    const h = await median(http);
    console.info(`[round trip] heartbeat direct p50 ${d.p50.toFixed(2)} ms p99 ${d.p99.toFixed(2)} ms; http p50 ${h.p50.toFixed(2)} ms p99 ${h.p99.toFixed(2)} ms`);
    expect(h.p50).toBeGreaterThan(0);
  });
});
