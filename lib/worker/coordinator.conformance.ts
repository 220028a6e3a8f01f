/**
 * One conformance suite for every transport of the Coordinator (lib/worker/coordinator.ts): the
 * direct database transport and the HTTP worker protocol must answer every operation the same
 * way — the same values, the same refusals with the same reasons, the same error classes, and
 * the same records left behind. Run by coordinator.direct.db.test.ts and
 * coordinator.http.db.test.ts against a real database.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Pool } from "pg";
import { describe, expect, onTestFinished } from "vitest";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { AuthorityLostError, CheckpointOrderError, InvalidWaitError, NotFoundError, ReleaseRefusedError } from "@/lib/engine/errors";
import { isPermit } from "@/lib/engine/permit-policy";
import type { PermitRequest } from "@/lib/engine/types";
import { createSingleStepWorkflows, servedFor, setLeaseExpiry, truncateEngineTables } from "@/lib/engine/test-support";
import type { ClaimedStep, LeaseHandle } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";
import { TEST_PURE_REGISTRATION } from "./test-support";
import { digestOf } from "@/lib/engine/digest";

export type MakeCoordinator = (db: TestDatabase) => Coordinator | Promise<Coordinator>;

const ADAPTER = "pure";
const step = { adapter: ADAPTER, operation: "noop", stepClass: "pure" } as const;
const SERVED = servedFor(ADAPTER);
const effect = (externalReference: string) => ({ kind: "effect", externalReference, result: { ok: true }, verification: "direct_response" }) as const;
const leaseOf = (claimed: ClaimedStep, sessionId: string): LeaseHandle => ({ stepId: claimed.stepId, fencingTerm: claimed.fencingTerm, sessionId });
const permitRequest = (overrides: Partial<PermitRequest> = {}): PermitRequest => ({
  adapter: "conformance",
  operationClass: "create",
  limit: 1,
  ttlMs: 5_000,
  requestIdentity: "fl-permit",
  ...overrides,
});

async function one<T>(items: Promise<readonly T[]>): Promise<T> {
  const list = await items;
  expect(list).toHaveLength(1);
  return list[0]!;
}

export function coordinatorConformance(name: string, makeCoordinator: MakeCoordinator): void {
  /** A worker: its own coordinator and a registered session. */
  async function worker(db: TestDatabase) {
    const coordinator = await makeCoordinator(db);
    onTestFinished(() => coordinator.close());
    const { sessionId, served } = await coordinator.registerSession(TEST_PURE_REGISTRATION);
    expect(served).toEqual(SERVED);
    return { coordinator, sessionId };
  }

  /** Worker A reaches "invocation began" on one step, loses its lease to expiry, and worker B claims the step. */
  async function staleScenario(db: TestDatabase) {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, step);
    const a = await worker(db);
    const b = await worker(db);
    const leaseA = leaseOf(await one(a.coordinator.claim(a.sessionId, SERVED, 1)), a.sessionId);
    await a.coordinator.persistRequestIdentity(leaseA, "fl-stale", "1");
    await a.coordinator.beginInvocation(leaseA);
    await setLeaseExpiry(db.pool, stepId!, -1);
    expect(await a.coordinator.recover(a.sessionId, 10)).toBeGreaterThanOrEqual(1);
    const claimedB = await one(b.coordinator.claim(b.sessionId, SERVED, 1));
    return { stepId: stepId!, a, b, leaseA, leaseB: leaseOf(claimedB, b.sessionId), claimedB };
  }

  const rows = async (pool: Pool, text: string, values: unknown[]) => (await pool.query(text, values)).rows;

  describe(`coordinator conformance: ${name}`, () => {
    test.beforeEach(async ({ db }) => {
      await truncateEngineTables(db.pool);
    });

    test("registers a session, heartbeats it, and stops it", async ({ db }) => {
      const { coordinator, sessionId } = await worker(db);
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await coordinator.heartbeat(sessionId)).toBe(true);
      await coordinator.stopSession(sessionId, "conformance");
      expect(await coordinator.heartbeat(sessionId)).toBe(false);
      expect(await rows(db.pool, "SELECT transport, stop_reason, pid FROM worker_session WHERE id = $1", [sessionId])).toEqual([
        { transport: coordinator.transport, stop_reason: "conformance", pid: process.pid },
      ]);
    });

    test("claim returns steps with their fencing terms, typed", async ({ db }) => {
      const input = { text: "héllo", nested: { list: [1, 2.5, null, true] } };
      const stepIds = await createSingleStepWorkflows(db.pool, 2, { ...step, input });
      const { coordinator, sessionId } = await worker(db);
      expect(await coordinator.claim(sessionId, SERVED, 0)).toEqual([]);
      const claimed = await coordinator.claim(sessionId, SERVED, 5);
      expect(claimed.map((c) => c.stepId).sort()).toEqual([...stepIds].sort());
      for (const c of claimed) {
        expect(c).toMatchObject({ fencingTerm: 1n, mode: "execute", requestIdentity: null, adapter: ADAPTER, operation: "noop", stepClass: "pure", attemptsStarted: 1 });
        expect(typeof c.epoch).toBe("bigint");
        expect(c.expiresAt).toBeInstanceOf(Date);
        expect(c.deadlineAt).toBeInstanceOf(Date);
        expect(c.dbNow).toBeInstanceOf(Date);
        expect(c.expiresAt.getTime()).toBeGreaterThan(c.dbNow.getTime());
        expect(c.input).toEqual(input);
        expect(c.leaseTtlMs).toBeGreaterThan(0);
      }
      expect(await coordinator.claim(sessionId, SERVED, 5)).toEqual([]);
      expect(await coordinator.claim(sessionId, [{ kind: "no-such-kind", version: 1 }], 5)).toEqual([]);
    });

    test("renew is granted to the holder and refused, with a reason, to another session and for an ended lease", async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 1, step);
      const a = await worker(db);
      const b = await worker(db);
      const claimed = await one(a.coordinator.claim(a.sessionId, SERVED, 1));
      const lease = leaseOf(claimed, a.sessionId);

      const granted = await one(a.coordinator.renew(a.sessionId, [{ ...lease, checkpointVersion: claimed.checkpointVersion }]));
      expect(granted).toMatchObject({ stepId: lease.stepId, renewed: true });
      if (!granted.renewed) throw new Error("unreachable");
      expect(granted.expiresAt).toBeInstanceOf(Date);
      expect(granted.dbNow).toBeInstanceOf(Date);
      expect(granted.expiresAt.getTime()).toBeGreaterThan(granted.dbNow.getTime());

      const wrongOwner = await one(b.coordinator.renew(b.sessionId, [{ ...lease, sessionId: b.sessionId, checkpointVersion: claimed.checkpointVersion }]));
      expect(wrongOwner).toEqual({ stepId: lease.stepId, renewed: false, reason: "not_owner" });

      await a.coordinator.release(lease, "conformance");
      const ended = await one(a.coordinator.renew(a.sessionId, [{ ...lease, checkpointVersion: claimed.checkpointVersion }]));
      expect(ended).toEqual({ stepId: lease.stepId, renewed: false, reason: "lease_ended" });
      expect(await a.coordinator.renew(a.sessionId, [])).toEqual([]);

      const events = await rows(db.pool, "SELECT kind::text, reason FROM lease_history WHERE step_id = $1 ORDER BY at, id", [lease.stepId]);
      expect(events.map((e) => e.kind)).toEqual(["acquired", "renewed", "renewal_refused", "released", "renewal_refused"]);
    });

    test("the three checkpoints are accepted in order", async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 1, step);
      const { coordinator, sessionId } = await worker(db);
      const claimed = await one(coordinator.claim(sessionId, SERVED, 1));
      const lease = leaseOf(claimed, sessionId);
      const identity = await coordinator.persistRequestIdentity(lease, "fl-in-order", "1");
      expect(identity).toEqual({ checkpointVersion: claimed.checkpointVersion + 1, requestIdentity: "fl-in-order" });
      expect(await coordinator.beginInvocation(lease)).toEqual({ checkpointVersion: claimed.checkpointVersion + 2 });
      expect(await coordinator.observeResponse(lease, "ext-1", { delivered: true, n: 1 })).toEqual({ checkpointVersion: claimed.checkpointVersion + 3 });
      expect(await rows(db.pool, "SELECT checkpoint::text, external_reference, observed_result FROM attempt WHERE step_id = $1", [lease.stepId])).toEqual([
        { checkpoint: "response_observed", external_reference: "ext-1", observed_result: { delivered: true, n: 1 } },
      ]);
      // A renewal must present the current checkpoint version.
      const renewed = await one(coordinator.renew(sessionId, [{ ...lease, checkpointVersion: claimed.checkpointVersion + 3 }]));
      expect(renewed.renewed).toBe(true);
    });

    test("checkpoints out of order are refused with CheckpointOrderError", async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 1, step);
      const { coordinator, sessionId } = await worker(db);
      const lease = leaseOf(await one(coordinator.claim(sessionId, SERVED, 1)), sessionId);
      const early = coordinator.beginInvocation(lease);
      await expect(early).rejects.toBeInstanceOf(CheckpointOrderError);
      await expect(early).rejects.toMatchObject({ code: "checkpoint_order", operation: "begin_invocation", stepId: lease.stepId });
      await expect(coordinator.observeResponse(lease, "ext-early", {})).rejects.toBeInstanceOf(CheckpointOrderError);
      await coordinator.persistRequestIdentity(lease, "fl-order", "1");
      await expect(coordinator.observeResponse(lease, "ext-early", {})).rejects.toBeInstanceOf(CheckpointOrderError);
      const effectAbsent = await coordinator.beginInvocation(lease).then(() => coordinator.observeEffectAbsent(lease, { refused: "definitely" }));
      expect(effectAbsent.checkpointVersion).toBeGreaterThan(0);
      expect(await rows(db.pool, "SELECT checkpoint::text, observed_effect::text FROM attempt WHERE step_id = $1", [lease.stepId])).toEqual([
        { checkpoint: "response_observed", observed_effect: "absent" },
      ]);
    });

    test("a stale term's write is refused with AuthorityLostError, recorded as a fencing rejection and a late observation", async ({ db }) => {
      const { stepId, a, leaseA } = await staleScenario(db);
      const refused = await a.coordinator.observeResponse(leaseA, "ext-late", { delivered: true }).then(
        () => new Error("the stale write was accepted"),
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(AuthorityLostError);
      expect(refused).toMatchObject({
        code: "authority_lost",
        operation: "observe_response",
        stepId,
        presentedTerm: 1n,
        reason: "superseded",
        currentTerm: 2n,
      });
      expect(await rows(
        db.pool,
        `SELECT r.operation, r.presented_term, r.current_term, r.reason::text, o.external_reference, o.result
         FROM fencing_rejection r JOIN late_observation o ON o.id = r.late_observation_id WHERE r.step_id = $1`,
        [stepId],
      )).toEqual([
        { operation: "observe_response", presented_term: "1", current_term: "2", reason: "superseded", external_reference: "ext-late", result: { digest: digestOf({ delivered: true }) } },
      ]);

      // A session presenting another session's current lease as its own is refused: not the owner.
      const notOwner = a.coordinator.beginInvocation({ stepId, fencingTerm: 2n, sessionId: a.sessionId });
      await expect(notOwner).rejects.toBeInstanceOf(AuthorityLostError);
      await expect(notOwner).rejects.toMatchObject({ reason: "not_owner", presentedTerm: 2n, currentTerm: 2n });
    });

    test("commitReceipts answers per entry: committed, or refused with AuthorityLostError", async ({ db }) => {
      const stepIds = await createSingleStepWorkflows(db.pool, 2, step);
      const a = await worker(db);
      const b = await worker(db);
      const claimed = await a.coordinator.claim(a.sessionId, SERVED, 2);
      expect(claimed).toHaveLength(2);
      const [fresh, stale] = claimed.map((c) => leaseOf(c, a.sessionId)) as [LeaseHandle, LeaseHandle];
      await setLeaseExpiry(db.pool, stale.stepId, -1);
      await b.coordinator.recover(b.sessionId, 10);
      const takenOver = await one(b.coordinator.claim(b.sessionId, SERVED, 1));
      expect(takenOver).toMatchObject({ stepId: stale.stepId, fencingTerm: 2n });

      const results = await a.coordinator.commitReceipts(a.sessionId, [
        { lease: fresh, conclusion: effect("ext-fresh") },
        { lease: stale, conclusion: { kind: "no_action_needed", reason: "already done" } },
      ]);
      expect(results).toHaveLength(2);
      const [committed, refused] = results;
      expect(committed).toMatchObject({ stepId: fresh.stepId, committed: true, receiptId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(refused).toMatchObject({ stepId: stale.stepId, committed: false });
      if (refused?.committed !== false) throw new Error("unreachable");
      expect(refused.error).toBeInstanceOf(AuthorityLostError);
      expect(refused.error).toMatchObject({ operation: "commit_receipt", reason: "superseded", presentedTerm: 1n, currentTerm: 2n });
      expect(await a.coordinator.commitReceipts(a.sessionId, [])).toEqual([]);

      expect(await rows(db.pool, "SELECT step_id, external_reference FROM receipt", [])).toEqual([{ step_id: fresh.stepId, external_reference: "ext-fresh" }]);
      expect(await rows(db.pool, "SELECT step_id, operation FROM late_observation", [])).toEqual([{ step_id: stale.stepId, operation: "commit_receipt" }]);
      expect(stepIds).toContain(fresh.stepId);
    });

    test("commitAndClaim commits each receipt on its own lease, then claims for the freed slots, in that order", async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 2, step);
      const a = await worker(db);
      const b = await worker(db);
      const [fresh, stale] = (await a.coordinator.claim(a.sessionId, SERVED, 2)).map((c) => leaseOf(c, a.sessionId)) as [LeaseHandle, LeaseHandle];
      await setLeaseExpiry(db.pool, stale.stepId, -1);
      await b.coordinator.recover(b.sessionId, 10);
      const later = await createSingleStepWorkflows(db.pool, 3, step);

      const { results, claimed } = await a.coordinator.commitAndClaim(
        a.sessionId,
        SERVED,
        [
          { lease: fresh, conclusion: effect("ext-alongside") },
          { lease: stale, conclusion: { kind: "no_action_needed", reason: "already done" } },
        ],
        2,
      );
      expect(results).toHaveLength(2);
      expect(results[0]).toMatchObject({ stepId: fresh.stepId, committed: true });
      const refused = results[1];
      if (refused?.committed !== false) throw new Error("the stale lease's receipt must be refused");
      expect(refused.error).toBeInstanceOf(AuthorityLostError);
      expect(refused.error).toMatchObject({ operation: "commit_receipt", presentedTerm: 1n });
      // Claimed after the commit: two of the three new steps and the recovered one are ready.
      expect(claimed).toHaveLength(2);
      for (const c of claimed) {
        expect(c.fencingTerm).toBeGreaterThanOrEqual(1n);
        expect(c.expiresAt).toBeInstanceOf(Date);
        expect([...later, stale.stepId]).toContain(c.stepId);
      }
      expect(await rows(db.pool, "SELECT step_id FROM receipt", [])).toEqual([{ step_id: fresh.stepId }]);
      // The claimed leases are a's: renewing them is granted.
      const renewed = await a.coordinator.renew(a.sessionId, claimed.map((c) => ({ ...leaseOf(c, a.sessionId), checkpointVersion: c.checkpointVersion })));
      expect(renewed.map((r) => r.renewed)).toEqual([true, true]);

      const none = await a.coordinator.commitAndClaim(a.sessionId, SERVED, [], 0);
      expect(none).toEqual({ results: [], claimed: [] });
    });

    test("reportFailure ends the attempt and recovery decides from the evidence", async ({ db }) => {
      const [stepId] = await createSingleStepWorkflows(db.pool, 1, step);
      const { coordinator, sessionId } = await worker(db);
      const lease = leaseOf(await one(coordinator.claim(sessionId, SERVED, 1)), sessionId);
      await coordinator.reportFailure(lease, "handler threw: conformance");
      expect(await rows(db.pool, "SELECT outcome::text, outcome_reason FROM attempt WHERE step_id = $1", [stepId])).toEqual([
        { outcome: "failed", outcome_reason: "handler threw: conformance" },
      ]);
      expect(await rows(db.pool, "SELECT trigger::text FROM recovery_decision WHERE step_id = $1", [stepId])).toEqual([{ trigger: "attempt_failed" }]);
      await expect(coordinator.reportFailure(lease, "again")).rejects.toBeInstanceOf(AuthorityLostError);
    });

    test("release hands work back, with a delay, refuses after invocation began, and accepts a known-absent effect", async ({ db }) => {
      const [stepId] = await createSingleStepWorkflows(db.pool, 1, step);
      const { coordinator, sessionId } = await worker(db);
      const first = leaseOf(await one(coordinator.claim(sessionId, SERVED, 1)), sessionId);
      await coordinator.release(first, "stopping");
      expect(await rows(db.pool, "SELECT state::text, next_eligible_at <= now() AS eligible FROM step WHERE id = $1", [stepId])).toEqual([{ state: "ready", eligible: true }]);
      await expect(coordinator.release(first, "twice")).rejects.toBeInstanceOf(AuthorityLostError);

      const second = leaseOf(await one(coordinator.claim(sessionId, SERVED, 1)), sessionId);
      await coordinator.release(second, "waiting: rate limited", { delayMs: 60_000 });
      expect(await rows(db.pool, "SELECT state::text, next_eligible_at > now() + interval '50 seconds' AS waiting FROM step WHERE id = $1", [stepId])).toEqual([{ state: "ready", waiting: true }]);
      expect(await coordinator.claim(sessionId, SERVED, 1)).toEqual([]);

      await db.pool.query("UPDATE step SET next_eligible_at = now() WHERE id = $1", [stepId]);
      const third = leaseOf(await one(coordinator.claim(sessionId, SERVED, 1)), sessionId);
      await coordinator.persistRequestIdentity(third, "fl-release", "1");
      await coordinator.beginInvocation(third);
      const refused = coordinator.release(third, "too late");
      await expect(refused).rejects.toBeInstanceOf(ReleaseRefusedError);
      await expect(refused).rejects.toMatchObject({ code: "release_refused", stepId, checkpoint: "invocation_began" });
      await coordinator.release(third, "rate limited after invocation", { delayMs: 0, effectAbsent: true });
      expect(await rows(db.pool, "SELECT fencing_term, outcome::text, observed_effect::text FROM attempt WHERE step_id = $1 ORDER BY fencing_term", [stepId])).toEqual([
        { fencing_term: "1", outcome: "released", observed_effect: null },
        { fencing_term: "2", outcome: "released", observed_effect: null },
        { fencing_term: "3", outcome: "released", observed_effect: "absent" },
      ]);
    });

    test("adapter permits: acquire within capacity, refuse beyond it, release, hold; authority lost without the lease", async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 2, step);
      const { coordinator, sessionId } = await worker(db);
      const [one1, two] = (await coordinator.claim(sessionId, SERVED, 2)).map((c) => leaseOf(c, sessionId)) as [LeaseHandle, LeaseHandle];
      const permit = await coordinator.acquirePermit(one1, permitRequest());
      if (!isPermit(permit)) throw new Error(`no permit: ${JSON.stringify(permit)}`);
      expect(permit.permitId).toMatch(/^[0-9a-f-]{36}$/);
      expect(permit.expiresAt).toBeInstanceOf(Date);

      const full = await coordinator.acquirePermit(two, permitRequest());
      expect(full).not.toBeNull();
      expect(isPermit(full)).toBe(false);

      await coordinator.releasePermit(permit.permitId);
      const second = await coordinator.acquirePermit(two, permitRequest());
      if (!isPermit(second)) throw new Error("capacity was not freed by the release");
      await coordinator.holdPermit(second.permitId, "outcome unknown: conformance", 60_000);
      expect(await rows(db.pool, "SELECT id, state::text FROM adapter_permit ORDER BY acquired_at", [])).toEqual([
        { id: permit.permitId, state: "released" },
        { id: second.permitId, state: "held" },
      ]);
      expect(isPermit(await coordinator.acquirePermit(one1, permitRequest()))).toBe(false);

      await coordinator.release(one1, "done");
      const afterRelease = coordinator.acquirePermit(one1, permitRequest({ adapter: "other" }));
      await expect(afterRelease).rejects.toBeInstanceOf(AuthorityLostError);
      await expect(afterRelease).rejects.toMatchObject({ operation: "acquire_permit", reason: "lease_ended" });
    });

    test("postLateObservation keeps evidence from a stale lease; an unknown lease is NotFoundError", async ({ db }) => {
      const { stepId, a, leaseA } = await staleScenario(db);
      await a.coordinator.postLateObservation(leaseA, { operation: "timeout_observed", externalReference: "ext-after", result: { late: true } });
      expect(await rows(db.pool, "SELECT fencing_term, operation, external_reference, result FROM late_observation WHERE step_id = $1", [stepId])).toEqual([
        { fencing_term: "1", operation: "timeout_observed", external_reference: "ext-after", result: { digest: digestOf({ late: true }) } },
      ]);
      const missing = a.coordinator.postLateObservation({ ...leaseA, fencingTerm: 99n }, { operation: "x", externalReference: null, result: null });
      await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    });

    test("recover decides an expired lease from its evidence", async ({ db }) => {
      const [stepId] = await createSingleStepWorkflows(db.pool, 1, step);
      const { coordinator, sessionId } = await worker(db);
      await one(coordinator.claim(sessionId, SERVED, 1));
      expect(await coordinator.recover(sessionId, 10)).toBe(0);
      await setLeaseExpiry(db.pool, stepId!, -1);
      expect(await coordinator.recover(sessionId, 10)).toBe(1);
      expect(await rows(db.pool, "SELECT trigger::text, decided_by FROM recovery_decision WHERE step_id = $1", [stepId])).toEqual([
        { trigger: "lease_expired", decided_by: sessionId },
      ]);
      expect(await rows(db.pool, "SELECT state::text FROM step WHERE id = $1", [stepId])).toEqual([{ state: "ready" }]);
      const again = await one(coordinator.claim(sessionId, SERVED, 1));
      expect(again.fencingTerm).toBe(2n);
    });

    test("park gives up the lease and arms the wait, which settleDue fires when due; a stale lease cannot park, nor a bad request", async ({ db }) => {
      const [parked, held] = await createSingleStepWorkflows(db.pool, 2, step);
      const { coordinator, sessionId } = await worker(db);
      const claimed = await coordinator.claim(sessionId, SERVED, 2);
      const lease = (stepId: string) => leaseOf(claimed.find((c) => c.stepId === stepId)!, sessionId);
      const armed = await coordinator.park(lease(parked!), { room: "timer", request: { afterMs: 300 } }, "waiting: timer");
      expect(armed).toMatchObject({ room: "timer", settled: false, dueAt: expect.any(Date) });
      expect(await rows(db.pool, "SELECT s.state::text, a.outcome::text, a.ended_at IS NOT NULL AS ended FROM step s JOIN attempt a ON a.step_id = s.id WHERE s.id = $1", [parked])).toEqual([
        { state: "waiting", outcome: "waiting", ended: true },
      ]);
      // A bad request is refused by its room and leaves the lease as it was.
      await expect(coordinator.park(lease(held!), { room: "timer", request: { afterMs: -5 } }, "waiting: timer")).rejects.toBeInstanceOf(InvalidWaitError);
      await expect(coordinator.park(lease(held!), { room: "sundial", request: {} }, "waiting")).rejects.toBeInstanceOf(InvalidWaitError);
      // A lease that lost its authority cannot park: refused, and recorded like any fenced write.
      await setLeaseExpiry(db.pool, held!, -1);
      await expect(coordinator.park(lease(held!), { room: "timer", request: { afterMs: 0 } }, "waiting: timer")).rejects.toBeInstanceOf(AuthorityLostError);
      expect(await rows(db.pool, "SELECT operation FROM fencing_rejection WHERE step_id = $1", [held])).toEqual([{ operation: "park" }]);
      // settleDue waits for the timer's time (counted from when the step became ready), then fires it.
      expect(await coordinator.settleDue(100, 5_000)).toBe(1);
      expect(await rows(db.pool, "SELECT s.state::text, r.verification_method::text, t.settled_at >= t.due_at AS on_time FROM step s JOIN receipt r ON r.step_id = s.id JOIN timer t ON t.step_id = s.id WHERE s.id = $1", [parked])).toEqual([
        { state: "completed", verification_method: "database_clock", on_time: true },
      ]);
      expect(await coordinator.settleDue(100, 100)).toBe(0);
    });

    test("waitForWork wakes on a newly ready step well before its timeout, and times out without one", async ({ db }) => {
      const { coordinator } = await worker(db);
      // The first wait also establishes the listener.
      let startedAt = performance.now();
      await coordinator.waitForWork(200);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(150);

      startedAt = performance.now();
      const waited = coordinator.waitForWork(10_000);
      setTimeout(() => void createSingleStepWorkflows(db.pool, 1, step), 300);
      await waited;
      const elapsed = performance.now() - startedAt;
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3_000);
    });

    test("a step made ready while no one waits (a claim in flight) wakes the next wait at once", async ({ db }) => {
      const { coordinator } = await worker(db);
      await coordinator.waitForWork(100);
      await createSingleStepWorkflows(db.pool, 1, step);
      await delay(300); // the notification arrives with no waiter
      const startedAt = performance.now();
      await coordinator.waitForWork(10_000);
      expect(performance.now() - startedAt).toBeLessThan(3_000);
    });

    // Last: over HTTP the server's listener is shared by the file's tests, and a notification
    // this test leaves unconsumed would wake the next test's first wait early.
    test("claimOrWait claims at once when work is ready, and otherwise returns the work that arrives during its wait", async ({ db }) => {
      const { coordinator, sessionId } = await worker(db);
      const [ready] = await createSingleStepWorkflows(db.pool, 1, step);
      expect((await one(coordinator.claimOrWait(sessionId, SERVED, 5, 10_000))).stepId).toBe(ready);

      // Nothing ready: the call waits its timeout and answers empty.
      let startedAt = performance.now();
      expect(await coordinator.claimOrWait(sessionId, SERVED, 5, 200)).toEqual([]);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(150);

      startedAt = performance.now();
      const waiting = coordinator.claimOrWait(sessionId, SERVED, 5, 10_000);
      let arrived: string[] = [];
      setTimeout(() => void createSingleStepWorkflows(db.pool, 1, step).then((ids) => (arrived = ids)), 300);
      const claimed = await one(waiting);
      const elapsed = performance.now() - startedAt;
      expect(arrived).toEqual([claimed.stepId]);
      expect(claimed).toMatchObject({ fencingTerm: 1n, mode: "execute" });
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3_000);
      expect(await coordinator.claimOrWait(sessionId, SERVED, 0, 10_000)).toEqual([]);

      // Stopping ends the wait at once, and what becomes ready afterwards is left for others.
      const stopping = new AbortController();
      startedAt = performance.now();
      const stopped = coordinator.claimOrWait(sessionId, SERVED, 5, 10_000, stopping.signal);
      setTimeout(() => stopping.abort(), 200);
      expect(await stopped).toEqual([]);
      expect(performance.now() - startedAt).toBeLessThan(3_000);
      const [left] = await createSingleStepWorkflows(db.pool, 1, step);
      await delay(300);
      expect((await one(coordinator.claim(sessionId, SERVED, 5))).stepId).toBe(left);
    });
  });
}
