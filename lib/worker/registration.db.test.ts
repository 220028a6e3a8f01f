/**
 * Registration and versions, as adopters' workers meet them: each worker claims only the
 * workflow versions it registered; the same kind and version registered with another shape is
 * refused over either transport, naming what differs; a request pins the version current at its
 * creation and finishes on it after a newer one is registered; a request no live worker serves
 * holds no lease and says so to engineers while its end user sees the usual calm line; and
 * recovery decides from the contract stored at registration, in a process that never loaded the
 * workflow.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, describe, expect, onTestFinished, vi } from "vitest";
import { z } from "zod";
import { installWorkerToken } from "@/lib/auth/worker-tokens";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { pool as appPool } from "@/lib/db/pool";
import { defineAdapter, type AdapterDefinition } from "@/lib/definitions/adapter";
import { done, effect } from "@/lib/definitions/outcome";
import { defineWorkflow, type Milestone, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { DefinitionConflictError } from "@/lib/engine/errors";
import { beginInvocation, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { claimSteps } from "@/lib/engine/lease";
import { setLeaseExpiry, truncateEngineTables } from "@/lib/engine/test-support";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { createRequest } from "@/lib/requests/create";
import { listRequests } from "@/lib/requests/list";
import { readStepDetail } from "@/lib/steps/detail";
import { workerProtocolListener } from "@/lib/api/worker-protocol";
import { createWorker } from "./http-worker";
import { createFastClass } from "./test-definitions";
import { spawnWorker, stopAll } from "./test-process";
import { testWorker } from "./test-support";
import type { Worker } from "./worker";

const milestone: Milestone = { upcoming: "Your card", current: "Writing your card", done: "Card written" };
const running: Worker[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((worker) => worker.stop()));
});

afterAll(async () => {
  // The route handlers' pool, opened by the HTTP test alone.
  if (process.env.DATABASE_URL) await appPool().end();
});

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE workflow_definition, worker_session_definition CASCADE");
  await db.pool.query("DELETE FROM adapter_definition WHERE name <> 'pure'");
});

/** A one-step pure workflow whose step concludes with who ran it. */
const signed = (kind: string, version: number, by: string, words: Milestone = milestone): WorkflowDefinition =>
  defineWorkflow({ kind, version, input: z.object({ n: z.number() }), steps: { write: { milestone: words, run: async () => done({ by }) } } }) as WorkflowDefinition;

async function started(db: TestDatabase, workflows: readonly WorkflowDefinition[]): Promise<Worker> {
  const worker = testWorker(db.pool, workflows);
  await worker.start();
  running.push(worker);
  return worker;
}

const create = (db: TestDatabase, kind: string, n: number, version: number | null = null) =>
  createRequest(db.pool, { kind, version, input: { n }, idempotencyKey: null, requester: "test", deadlineAt: null }).then(({ request }) => request);

async function statusOf(db: TestDatabase, id: string): Promise<{ status: string; version: number }> {
  const { rows } = await db.pool.query<{ status: string; version: number }>("SELECT status, version FROM workflow WHERE id = $1", [id]);
  return rows[0]!;
}

const resultsOf = async (db: TestDatabase, ids: readonly string[]) =>
  (await db.pool.query<{ by: string }>("SELECT r.observed_result->>'by' AS by FROM receipt r WHERE r.workflow_id = ANY($1::uuid[])", [ids])).rows.map((row) => row.by);

const attemptOwners = async (db: TestDatabase, ids: readonly string[]) =>
  (await db.pool.query<{ owner: string }>("SELECT DISTINCT owner_session_id AS owner FROM attempt WHERE workflow_id = ANY($1::uuid[])", [ids])).rows.map((row) => row.owner);

test("two kinds side by side: each worker claims only the kind it registered", async ({ db }) => {
  // Registered first, so the requests exist before either worker looks: the first worker to
  // claim could otherwise take them all.
  for (const kind of ["test-alpha", "test-beta"]) {
    const registrar = testWorker(db.pool, [signed(kind, 1, "registrar")]);
    await registrar.start();
    await registrar.stop();
  }
  const alphas = await Promise.all([1, 2, 3, 4].map((n) => create(db, "test-alpha", n)));
  const betas = await Promise.all([1, 2, 3, 4].map((n) => create(db, "test-beta", n)));
  const alpha = await started(db, [signed("test-alpha", 1, "alpha worker")]);
  const beta = await started(db, [signed("test-beta", 1, "beta worker")]);
  await vi.waitFor(async () => {
    for (const request of [...alphas, ...betas]) expect((await statusOf(db, request.id)).status).toBe("completed");
  }, { timeout: 15_000 });
  expect(new Set(await resultsOf(db, alphas.map((r) => r.id)))).toEqual(new Set(["alpha worker"]));
  expect(new Set(await resultsOf(db, betas.map((r) => r.id)))).toEqual(new Set(["beta worker"]));
  expect(await attemptOwners(db, alphas.map((r) => r.id))).toEqual([alpha.sessionId]);
  expect(await attemptOwners(db, betas.map((r) => r.id))).toEqual([beta.sessionId]);
});

describe("the same kind and version with another shape", () => {
  const changed = signed("test-cards", 1, "v1", { ...milestone, done: "Card finished" });

  test("is refused over the direct transport, naming what differs", async ({ db }) => {
    await started(db, [signed("test-cards", 1, "v1")]);
    const refusal = await testWorker(db.pool, [changed]).start().then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DefinitionConflictError);
    expect((refusal as DefinitionConflictError).subject).toBe("workflow test-cards@1");
    expect((refusal as DefinitionConflictError).differences.join("\n")).toMatch(/write.*milestone.*done.*"Card written".*"Card finished"/s);
  });

  test("is refused over HTTP with the same error and differences, and the stored shape stays", async ({ db }) => {
    process.env.DATABASE_URL = db.url;
    await installWorkerToken(db.pool, "registration-test", "registration-test-token-0123456789", "test setup");
    await started(db, [signed("test-cards", 1, "v1")]);
    const server = createServer(workerProtocolListener(db.pool));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const worker = createWorker({ url, token: "registration-test-token-0123456789", workflows: [changed], log: () => undefined });
    const refusal = await worker.start().then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DefinitionConflictError);
    expect((refusal as DefinitionConflictError).differences.join("\n")).toMatch(/"Card written".*"Card finished"/s);
    const { rows } = await db.pool.query("SELECT steps->0->'milestone'->>'done' AS done FROM workflow_definition WHERE kind = 'test-cards' AND version = 1");
    expect(rows).toEqual([{ done: "Card written" }]);
  });

  test("an adapter registered again with another contract is refused, naming the promise that changed", async ({ db }) => {
    const adapter = (idempotencyKeys: boolean): AdapterDefinition<unknown> =>
      defineAdapter<unknown>({
        name: "cards",
        version: "1",
        contract: { idempotencyKeys, statusQuery: false, fenceEnforcement: false, repetition: idempotencyKeys ? "idempotency_protected" : "prohibited" },
        timeoutMs: 1_000,
        concurrencyLimit: 4,
        invoke: async () => ({ externalReference: null }),
      });
    const sending = (kind: string, adapterVersion: AdapterDefinition<unknown>) =>
      defineWorkflow({ kind, version: 1, input: z.unknown(), steps: { send: { adapter: adapterVersion, milestone } } }) as WorkflowDefinition;
    await started(db, [sending("test-send-a", adapter(true))]);
    const refusal = await testWorker(db.pool, [sending("test-send-b", adapter(false))]).start().then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(DefinitionConflictError);
    expect((refusal as DefinitionConflictError).subject).toBe("adapter cards@1");
    expect((refusal as DefinitionConflictError).differences.join("\n")).toMatch(/idempotencyKeys/);
  });
});

test("a request pins its version: version 1 finishes on version 1 after version 2 is registered; new requests take version 2", async ({ db }) => {
  const v1 = await started(db, [signed("test-cards", 1, "v1 code")]);
  await v1.stop();
  running.splice(running.indexOf(v1), 1);
  const first = await create(db, "test-cards", 1);
  expect(first.version).toBe(1);

  await started(db, [signed("test-cards", 2, "v2 code", { ...milestone, done: "Card ready" })]);
  const second = await create(db, "test-cards", 2);
  expect(second.version).toBe(2);
  await vi.waitFor(async () => expect((await statusOf(db, second.id)).status).toBe("completed"), { timeout: 10_000 });
  // The version 2 worker does not touch the version 1 request: not one attempt.
  expect(await statusOf(db, first.id)).toEqual({ status: "active", version: 1 });
  expect(await attemptOwners(db, [first.id])).toEqual([]);

  await started(db, [signed("test-cards", 1, "v1 code")]);
  await vi.waitFor(async () => expect((await statusOf(db, first.id)).status).toBe("completed"), { timeout: 10_000 });
  expect(await resultsOf(db, [first.id])).toEqual(["v1 code"]);
  expect(await resultsOf(db, [second.id])).toEqual(["v2 code"]);
  expect((await trackingViewByWorkflowId(db.pool, first.id))!.milestones.map((m) => m.label)).toEqual(["Card written"]);
});

test("a request no live worker serves holds no lease, tells engineers, and shows its end user the usual line", async ({ db }) => {
  const worker = await started(db, [signed("test-cards", 1, "v1")]);
  await worker.stop();
  running.splice(running.indexOf(worker), 1);
  const request = await create(db, "test-cards", 1);
  const { rows: steps } = await db.pool.query<{ id: string; state: string }>("SELECT id, state FROM step WHERE workflow_id = $1", [request.id]);
  // Any session can try: nothing of an unserved version is claimed.
  expect(await claimSteps(db.pool, worker.sessionId, [{ kind: "test-other", version: 1 }], 10)).toEqual([]);
  const { rows: leases } = await db.pool.query("SELECT count(*)::int AS n FROM lease WHERE workflow_id = $1", [request.id]);
  expect({ state: steps[0]!.state, leases: leases[0].n }).toEqual({ state: "ready", leases: 0 });

  const listed = await listRequests(db.pool, { limit: 10 } as Parameters<typeof listRequests>[1]);
  expect(listed.items.find((item) => item.id === request.id)).toMatchObject({ kind: "test-cards", version: 1, servedBy: 0 });
  expect((await readStepDetail(db.pool, steps[0]!.id)).workflow).toMatchObject({ kind: "test-cards", version: 1, servedBy: 0 });
  const view = await trackingViewByWorkflowId(db.pool, request.id);
  expect(JSON.stringify(view)).not.toMatch(/worker|serve|lease/i);
  expect(view!.headline.state).toBe("preparing");

  await started(db, [signed("test-cards", 1, "v1")]);
  await vi.waitFor(async () => expect((await statusOf(db, request.id)).status).toBe("completed"), { timeout: 10_000 });
});

test("recovery decides from the contract stored at registration, in a worker process that never loaded the workflow", async ({ db }) => {
  const cards = defineAdapter<unknown>({
    name: "cards",
    version: "1",
    contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
    timeoutMs: 1_000,
    concurrencyLimit: 4,
    invoke: async () => ({ externalReference: "never called" }),
  });
  const sending = defineWorkflow({ kind: "test-send", version: 1, input: z.unknown(), steps: { send: { adapter: cards, milestone, run: async (ctx) => effect(await ctx.invoke({})) } } });
  // Registered, then gone: the only code that knew the workflow stops.
  const worker = await started(db, [sending as WorkflowDefinition]);
  await worker.stop();
  running.splice(running.indexOf(worker), 1);
  const request = await create(db, "test-send", 0);
  const [claimed] = await claimSteps(db.pool, worker.sessionId, [{ kind: "test-send", version: 1 }], 1);
  const lease = { stepId: claimed!.stepId, fencingTerm: claimed!.fencingTerm, sessionId: worker.sessionId };
  await persistRequestIdentity(db.pool, lease, "fl-cards-1", "1");
  await beginInvocation(db.pool, lease);
  await setLeaseExpiry(db.pool, claimed!.stepId, -1);

  // A worker process serving other definitions only (lib/worker/test-definitions.ts) recovers it.
  await createFastClass(db.pool);
  const recoverer = spawnWorker(db.url, { FENCELINE_RECOVERY_INTERVAL_MS: "100" });
  try {
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT category FROM recovery_decision WHERE step_id = $1", [claimed!.stepId]);
      expect(rows, recoverer.tail()).toEqual([{ category: "retry_same_key" }]);
    }, { timeout: 20_000 });
  } finally {
    await stopAll([recoverer]);
  }
  const { rows } = await db.pool.query("SELECT s.state, s.next_mode, s.request_identity, w.id FROM step s JOIN workflow w ON w.id = s.workflow_id WHERE s.id = $1", [claimed!.stepId]);
  expect(rows[0]).toEqual({ state: "ready", next_mode: "retry_same_identity", request_identity: "fl-cards-1", id: request.id });
});
