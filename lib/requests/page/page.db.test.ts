/**
 * The request's page reads a request's whole story from the engine's records as they are, and its
 * actions apply only to the request as the operator saw it: a stale view is refused with what the
 * request is now (a change committed while the cancel waits for the request's row included), a rerun rearms only what evidence allows, and every action is audited once.
 */
import type { Pool } from "pg";
import { describe, expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { AuthorityLostError, NotFoundError } from "@/lib/engine/errors";
import { run } from "@/lib/engine/db";
import { claimSteps } from "@/lib/engine/lease";
import * as waitsSql from "@/lib/engine/sql/waits";
import { commitReceipts } from "@/lib/engine/receipt";
import { reportFailure, runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { registerTestContracts, servedFor, setLeaseExpiry, testKindOf, truncateEngineTables } from "@/lib/engine/test-support";
import type { LeaseHandle } from "@/lib/engine/types";
import { createWorkflow } from "@/lib/engine/workflow";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { cancelActiveRequest } from "@/lib/requests/read";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { cancelFromPage, rerunFromStep } from "./actions";
import { RerunRefusedError, StaleRequestViewError } from "./errors";
import { PREVIEW_CHARS, readRequestPage } from "./read";

async function claimOne(pool: Pool, adapter: string): Promise<LeaseHandle> {
  const session = await registerSession(pool, "direct");
  const [claimed] = await claimSteps(pool, session, servedFor(adapter), 1);
  if (!claimed) throw new Error("nothing to claim");
  return { stepId: claimed.stepId, fencingTerm: claimed.fencingTerm, sessionId: session };
}

const twoSteps = (adapter: string, attemptBudget: number, input: unknown = { n: 1 }) => ({
  kind: testKindOf(adapter),
  input,
  requester: "app:shop",
  idempotencyKey: `order-${Math.random()}`,
  steps: [
    { name: "first", adapter, operation: "noop", stepClass: "pure", attemptBudget },
    { name: "second", adapter, operation: "noop", stepClass: "pure", attemptBudget, dependsOn: ["first"] },
  ],
});

/**
 * Until a statement of this database waits for a lock (an event the database reports, not a
 * sleep). Asked outside any transaction: inside one, pg_stat_activity stays as first read.
 */
async function untilSomeoneWaitsForALock(db: Pool): Promise<void> {
  for (;;) {
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const audits = async (pool: Pool, id: string) =>
  (await pool.query<{ action: string; actor: string }>("SELECT action, actor FROM audit_log WHERE subject_id = $1 ORDER BY id", [id])).rows;

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await registerTestContracts(db.pool);
});

describe("the request's story", () => {
  test("an expired lease, its stale holder refused, a recovery and a receipt read off one request in term order", async ({ db }) => {
    const created = await createWorkflow(db.pool, { ...twoSteps("idempotent", 5, { note: "x".repeat(PREVIEW_CHARS + 100) }), idempotencyKey: "order-42" });
    const stale = await claimOne(db.pool, "idempotent");
    await persistRequestIdentity(db.pool, stale, "fl-42", "1");
    await beginInvocation(db.pool, stale);
    await setLeaseExpiry(db.pool, stale.stepId, -1);
    const [decided] = await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "scanner" });
    expect(decided?.decision.category).toBe("retry_same_key");

    const fresh = await claimOne(db.pool, "idempotent");
    expect(fresh).toMatchObject({ stepId: stale.stepId, fencingTerm: 2n });
    // The answer of the first attempt arrives late: refused, and kept as a late observation.
    const [refused] = await commitReceipts(db.pool, stale.sessionId, [
      { lease: stale, conclusion: { kind: "effect", externalReference: "ext-1", result: { ok: true }, verification: "direct_response" } },
    ]);
    expect(refused).toMatchObject({ committed: false, error: expect.any(AuthorityLostError) });
    await commitReceipts(db.pool, fresh.sessionId, [
      { lease: fresh, conclusion: { kind: "effect", externalReference: "ext-1", result: { ok: true }, verification: "idempotent_replay" } },
    ]);

    const page = await readRequestPage(db.pool, created.workflowId);
    expect(page.request).toMatchObject({ id: created.workflowId, requester: "app:shop", idempotencyKey: "order-42", status: "active" });
    expect(page.request.input).toMatchObject({ truncated: true, chars: PREVIEW_CHARS + 100 + '{"note": ""}'.length });
    expect(page.request.input.text).toHaveLength(PREVIEW_CHARS);
    const [first, second] = page.steps;
    expect(first!.attempts.map((a) => [a.fencingTerm, a.outcome, a.endReason, a.checkpoint])).toEqual([
      [1, "lease_lost", "expired", "invocation_began"],
      [2, "effect", "receipt", "receipt_committed"],
    ]);
    expect(first!.attempts[0]!.invocationBeganAt).not.toBeNull();
    expect(first!.recoveryDecisions).toEqual([expect.objectContaining({ fencingTerm: 1, trigger: "lease_expired", category: "retry_same_key", checkpoint: "invocation_began" })]);
    expect(first!.recoveryDecisions[0]!.reason).toMatch(/retry same identity|same/);
    expect(first!.fencingRejections).toEqual([expect.objectContaining({ presentedTerm: 1, currentTerm: 2, reason: "superseded" })]);
    expect(first!.lateObservations).toEqual([expect.objectContaining({ fencingTerm: 1, externalReference: "ext-1" })]);
    expect(first!.receipt).toMatchObject({ verificationMethod: "idempotent_replay", fencingTerm: 2, externalReference: "ext-1" });
    expect(first!.result).toEqual({ text: '{"ok": true}', chars: 12, truncated: false });
    expect(second).toMatchObject({ name: "second", state: "ready", attempts: [], receipt: null, dependsOn: [first!.id] });
    expect(page.projection?.headline.state).toBeDefined();

    const full = await readRequestPage(db.pool, created.workflowId, { full: true });
    expect(full.request.input.truncated).toBe(false);
  });

  test("the version changes when a step moves, and not on a read", async ({ db }) => {
    const created = await createWorkflow(db.pool, twoSteps("idempotent", 5));
    const before = await readRequestPage(db.pool, created.workflowId);
    expect((await readRequestPage(db.pool, created.workflowId)).version).toBe(before.version);
    await claimOne(db.pool, "idempotent");
    expect((await readRequestPage(db.pool, created.workflowId)).version).not.toBe(before.version);
  });

  test("its waits are lines of the story in their rooms' words, in the order they began: a timer that fired, then an event wait cancelled with the request", async ({ db }) => {
    const words = { upcoming: "Later", current: "Waiting", done: "Done" };
    const workflow = defineWorkflow({ kind: "page-waits", version: 1, input: z.object({ order: z.string() }) })
      .timer("cool", { milestone: words, afterMs: 300 })
      .event("confirmed", { dependsOn: ["cool"], milestone: words, name: "warehouse.confirmed", key: (ctx) => ctx.input.order, payload: z.object({}), timeoutMs: 3_600_000 })
      .step("thank", { dependsOn: ["confirmed"], milestone: words, run: async () => done() });
    const [request] = await createRequestsOf(db.pool, workflow, [{ order: "o-42" }]);
    const { workflowId, stepIds } = request!;
    const worker = testWorker(db.pool, [workflow]);
    await worker.start();
    let page = await readRequestPage(db.pool, workflowId);
    for (const deadline = Date.now() + 20_000; page.waits.length < 2 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = await readRequestPage(db.pool, workflowId);
    }
    await worker.stop();
    const [timer, event] = page.waits;
    expect(timer).toEqual({
      stepId: stepIds.get("cool"),
      room: "timer",
      startedAt: expect.any(String),
      waitingFor: expect.stringMatching(/^a timer until \d{1,2} \w+ at \d\d:\d\d UTC$/),
      until: expect.any(String),
      endedAt: expect.any(String),
      ending: "fired",
    });
    expect(Date.parse(timer!.endedAt!)).toBeGreaterThanOrEqual(Date.parse(timer!.until!));
    expect(event).toEqual({
      stepId: stepIds.get("confirmed"),
      room: "event",
      startedAt: expect.any(String),
      waitingFor: expect.stringMatching(/^event warehouse\.confirmed with key o-42, until \d{1,2} \w+ at \d\d:\d\d UTC$/),
      until: expect.any(String),
      endedAt: null,
      ending: null,
    });
    expect(Date.parse(event!.startedAt)).toBeGreaterThanOrEqual(Date.parse(timer!.endedAt!));

    expect(await cancelActiveRequest(db.pool, workflowId, "customer changed their mind")).toBe(true);
    const after = await readRequestPage(db.pool, workflowId);
    expect(after.waits.map((line) => [line.room, line.ending])).toEqual([
      ["timer", "fired"],
      ["event", "cancelled"],
    ]);
  });

  test("an unknown request is a NotFoundError", async ({ db }) => {
    await expect(readRequestPage(db.pool, "00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("cancel from the page", () => {
  test("a stale view is refused with what the request is now; the current one cancels once, audited; again answers it as it is", async ({ db }) => {
    const created = await createWorkflow(db.pool, twoSteps("idempotent", 5));
    const seen = (await readRequestPage(db.pool, created.workflowId)).version;
    await claimOne(db.pool, "idempotent");

    const refused = await cancelFromPage(db.pool, created.workflowId, seen, "customer asked", "eng@example.test").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StaleRequestViewError);
    expect((refused as StaleRequestViewError).current.steps.map((s) => [s.name, s.state])).toEqual([["first", "leased"], ["second", "blocked"]]);
    expect((await readRequestPage(db.pool, created.workflowId)).request.status).toBe("active");

    const now = (await readRequestPage(db.pool, created.workflowId)).version;
    expect(await cancelFromPage(db.pool, created.workflowId, now, "customer asked", "eng@example.test")).toMatchObject({ cancelled: true, status: "cancelled" });
    expect(await cancelFromPage(db.pool, created.workflowId, now, "customer asked", "eng@example.test")).toMatchObject({ cancelled: false, alreadyCancelled: true });
    expect(await audits(db.pool, created.workflowId)).toEqual([{ action: "request.cancelled", actor: "eng@example.test" }]);
  });

  test("a step that parks while the cancel waits for the request is a change: the cancel is refused, not applied over it", async ({ db }) => {
    const created = await createWorkflow(db.pool, twoSteps("idempotent", 5));
    const lease = await claimOne(db.pool, "idempotent");
    const seen = (await readRequestPage(db.pool, created.workflowId)).version;
    // The step parks as parkStep does: the request's row locked, then the step moved under it. The
    // cancel is sent while that transaction is open, and waits for the row.
    const parking = await db.pool.connect();
    try {
      await parking.query("BEGIN");
      await run(parking, waitsSql.lockRequestOfStep, [lease.stepId]);
      expect(await run(parking, waitsSql.parkStep, [lease.sessionId, lease.stepId, lease.fencingTerm.toString(), "waits for a timer"])).toHaveLength(1);
      const cancelling = cancelFromPage(db.pool, created.workflowId, seen, "customer asked", "eng@example.test").catch((error: unknown) => error);
      await untilSomeoneWaitsForALock(db.pool);
      await parking.query("COMMIT");
      const refused = await cancelling;
      expect(refused).toBeInstanceOf(StaleRequestViewError);
      expect((refused as StaleRequestViewError).current.steps.map((s) => [s.name, s.state])).toEqual([["first", "waiting"], ["second", "blocked"]]);
    } finally {
      parking.release();
    }
    expect((await readRequestPage(db.pool, created.workflowId)).request.status).toBe("active");
    expect(await audits(db.pool, created.workflowId)).toEqual([]);
  });
});

describe("rerun from a step", () => {
  async function failedAtSecond(pool: Pool) {
    const created = await createWorkflow(pool, twoSteps("idempotent", 1));
    const first = await claimOne(pool, "idempotent");
    await commitReceipts(pool, first.sessionId, [{ lease: first, conclusion: { kind: "no_action_needed", reason: "prepared" } }]);
    const second = await claimOne(pool, "idempotent");
    const applied = await reportFailure(pool, second, "handler threw: destination said 500");
    expect(applied.decision.category).toBe("give_up");
    return { workflowId: created.workflowId, firstId: first.stepId, secondId: second.stepId };
  }

  test("rearms the failed step with a new budget, keeps earlier attempts and receipts, and the request completes", async ({ db }) => {
    const { workflowId, firstId, secondId } = await failedAtSecond(db.pool);
    const seen = await readRequestPage(db.pool, workflowId);
    expect(seen.request.status).toBe("failed");

    const outcome = await rerunFromStep(db.pool, { id: workflowId, fromStepId: secondId, seenVersion: seen.version, budget: 2, reason: "destination fixed", actor: "eng@example.test" });
    expect(outcome).toMatchObject({ applied: true, steps: [{ stepId: secondId, name: "second", state: "ready", nextMode: "execute" }], toReview: [] });
    const again = await rerunFromStep(db.pool, { id: workflowId, fromStepId: secondId, seenVersion: seen.version, budget: 2, reason: "destination fixed", actor: "eng@example.test" });
    expect(again).toMatchObject({ applied: false, steps: outcome.steps });
    expect(await audits(db.pool, workflowId)).toEqual([{ action: "request.rerun", actor: "eng@example.test" }]);

    const retry = await claimOne(db.pool, "idempotent");
    expect(retry).toMatchObject({ stepId: secondId, fencingTerm: 2n });
    await commitReceipts(db.pool, retry.sessionId, [{ lease: retry, conclusion: { kind: "no_action_needed", reason: "done" } }]);
    const after = await readRequestPage(db.pool, workflowId);
    expect(after.request.status).toBe("completed");
    const second = after.steps.find((s) => s.id === secondId)!;
    expect(second.attempts.map((a) => [a.fencingTerm, a.outcome])).toEqual([[1, "failed"], [2, "no_action_needed"]]);
    expect(second.attemptBudget).toBe(3);
    expect(after.steps.find((s) => s.id === firstId)!.receipt?.fencingTerm).toBe(1);
  });

  test("refuses a stale view, a step with its receipt, and a request that did not fail, changing nothing", async ({ db }) => {
    const { workflowId, firstId, secondId } = await failedAtSecond(db.pool);
    const seen = (await readRequestPage(db.pool, workflowId)).version;
    const ask = (fromStepId: string, seenVersion: string) =>
      rerunFromStep(db.pool, { id: workflowId, fromStepId, seenVersion, budget: 2, reason: "try again", actor: "eng@example.test" }).catch((e: unknown) => e);
    expect(await ask(secondId, "0".repeat(32))).toBeInstanceOf(StaleRequestViewError);
    const receipted = await ask(firstId, seen);
    expect(receipted).toBeInstanceOf(RerunRefusedError);
    expect((receipted as RerunRefusedError).why).toMatch(/has its receipt/);
    expect((await readRequestPage(db.pool, workflowId)).version).toBe(seen);

    const active = await createWorkflow(db.pool, twoSteps("idempotent", 1));
    const version = (await readRequestPage(db.pool, active.workflowId)).version;
    const refused = await rerunFromStep(db.pool, { id: active.workflowId, fromStepId: active.stepIds.get("first")!, seenVersion: version, budget: 2, reason: "x y z", actor: "e" }).catch((e: unknown) => e);
    expect((refused as RerunRefusedError).why).toMatch(/it is active/);
    expect(await audits(db.pool, workflowId)).toEqual([]);
  });

  test("a step whose last attempt's outcome is unknown at an opaque destination goes to review, not back to work", async ({ db }) => {
    const created = await createWorkflow(db.pool, { ...twoSteps("opaque", 1), steps: [{ name: "only", adapter: "opaque", operation: "noop", stepClass: "pure", attemptBudget: 1 }] });
    const lease = await claimOne(db.pool, "opaque");
    await persistRequestIdentity(db.pool, lease, "fl-9", "1");
    await beginInvocation(db.pool, lease);
    // The engine never fails an unknown step itself; an operator's view of an older failure can
    // still hold one (a failure recorded before the evidence rule): the fixture writes it so.
    await db.pool.query("UPDATE attempt SET ended_at = now(), end_reason = 'failed', outcome = 'failed' WHERE step_id = $1", [lease.stepId]);
    await db.pool.query("UPDATE step SET state = 'failed', completed_at = now() WHERE id = $1", [lease.stepId]);
    await db.pool.query("UPDATE workflow SET status = 'failed', status_reason = 'deadline' WHERE id = $1", [created.workflowId]);
    const seen = (await readRequestPage(db.pool, created.workflowId)).version;

    const outcome = await rerunFromStep(db.pool, { id: created.workflowId, fromStepId: lease.stepId, seenVersion: seen, budget: 2, reason: "retry", actor: "eng@example.test" });
    expect(outcome).toMatchObject({ applied: true, toReview: [lease.stepId], steps: [{ state: "indeterminate" }] });
    const page = await readRequestPage(db.pool, created.workflowId);
    expect(page.reviewCases).toEqual([expect.objectContaining({ stepId: lease.stepId, status: "open", assignee: null })]);
    expect(await claimSteps(db.pool, lease.sessionId, servedFor("opaque"), 1)).toEqual([]);
  });
});
