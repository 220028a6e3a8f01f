/**
 * Adapter permits against real PostgreSQL: a short lease on destination capacity that only a
 * lease holder can take, that never overshoots its limit under concurrent acquirers, and that
 * stays held while a call's outcome is unknown.
 */
import type { Pool, PoolClient } from "pg";
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, persistRequestIdentity } from "./checkpoint";
import { inTransaction } from "./db";
import { AuthorityLostError } from "./errors";
import { claimSteps } from "./lease";
import { acquirePermit, holdPermit, releasePermit, sweepPermits } from "./permit";
import { isPermit } from "./permit-policy";
import type { Permit, PermitRequest } from "./types";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import { registerAdapters } from "./registration";
import { RATE_WINDOW_MS } from "./sql/permit";
import { createSingleStepWorkflows, servedFor, TEST_CONTRACTS, truncateEngineTables } from "./test-support";
import type { LeaseHandle } from "./types";

const request = (limit: number): PermitRequest => ({ adapter: "dest", operationClass: "create", limit, ttlMs: 5_000, requestIdentity: null });

async function leases(pool: Pool, count: number): Promise<LeaseHandle[]> {
  await createSingleStepWorkflows(pool, count, { adapter: "dest", operation: "deliver", stepClass: "external" });
  const session = await registerSession(pool, "direct");
  const claimed = await claimSteps(pool, session, servedFor("dest"), count);
  return claimed.map((step) => ({ stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId: session }));
}

async function permitFor(pool: Pool | PoolClient, lease: LeaseHandle, limit: number): Promise<Permit> {
  const permit = await acquirePermit(pool, lease, request(limit));
  if (!isPermit(permit)) throw new Error(`expected a permit, got ${JSON.stringify(permit)}`);
  return permit;
}

async function capacity(pool: Pool | PoolClient): Promise<{ inUse: number; counted: number }> {
  const { rows } = await pool.query(
    `SELECT (SELECT coalesce(sum(in_use), 0)::int FROM adapter_capacity) AS "inUse",
            (SELECT count(*)::int FROM adapter_permit WHERE state <> 'released') AS counted`,
  );
  return rows[0];
}

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

describe("acquire and release", () => {
  test("grants up to the limit and refuses the next, until one is released", async ({ db }) => {
    const held = await leases(db.pool, 4);
    const granted = [];
    for (const lease of held.slice(0, 3)) granted.push(await permitFor(db.pool, lease, 3));
    // Refused while calls are active: wait briefly, they end soon.
    expect(await acquirePermit(db.pool, held[3]!, request(3))).toEqual({ waitMs: null, reason: "capacity" });

    await releasePermit(db.pool, granted[0]!.permitId);
    await releasePermit(db.pool, granted[0]!.permitId);
    expect(await capacity(db.pool)).toEqual({ inUse: 2, counted: 2 });
    expect(isPermit(await acquirePermit(db.pool, held[3]!, request(3)))).toBe(true);
    expect(await capacity(db.pool)).toEqual({ inUse: 3, counted: 3 });
  });

  test("20 concurrent acquirers under a limit of 3: exactly 3 permits", async ({ db }) => {
    const held = await leases(db.pool, 20);
    const results = await Promise.all(held.map((lease) => acquirePermit(db.pool, lease, request(3))));
    expect(results.filter(isPermit)).toHaveLength(3);
    expect(await capacity(db.pool)).toEqual({ inUse: 3, counted: 3 });
  });

  test("only the current holder of the step's lease may take a permit; anyone else's try is a recorded fencing rejection", async ({ db }) => {
    const [lease] = await leases(db.pool, 1);
    const stranger = { ...lease!, sessionId: await registerSession(db.pool, "direct") };
    await expect(acquirePermit(db.pool, stranger, request(3))).rejects.toMatchObject({ code: "authority_lost", operation: "acquire_permit", reason: "not_owner" });
    await expect(acquirePermit(db.pool, { ...lease!, fencingTerm: 2n }, request(3))).rejects.toBeInstanceOf(AuthorityLostError);
    expect(await capacity(db.pool)).toEqual({ inUse: 0, counted: 0 });
    const { rows } = await db.pool.query("SELECT operation, presented_term::int, reason::text FROM fencing_rejection ORDER BY id");
    expect(rows).toEqual([
      { operation: "acquire_permit", presented_term: 1, reason: "not_owner" },
      { operation: "acquire_permit", presented_term: 2, reason: "superseded" },
    ]);
  });
});

describe("unknown outcomes keep their capacity", () => {
  test("a held permit stays counted until the step has a receipt, and tells a waiter how long it holds", async ({ db }) => {
    const [lease, waiter] = await leases(db.pool, 2);
    const permit = await permitFor(db.pool, lease!, 1);
    await holdPermit(db.pool, permit.permitId, "outcome unknown: timeout", 60_000);
    const refusal = await acquirePermit(db.pool, waiter!, request(1));
    expect(refusal).toMatchObject({ waitMs: expect.any(Number) });
    expect((refusal as { waitMs: number }).waitMs).toBeGreaterThan(59_000);
    expect((refusal as { waitMs: number }).waitMs).toBeLessThanOrEqual(60_000);
    await sweepPermits(db.pool, 100);
    expect(await capacity(db.pool)).toEqual({ inUse: 1, counted: 1 });

    await commitReceipts(db.pool, lease!.sessionId, [{ lease: lease!, conclusion: { kind: "effect", externalReference: "x-1", result: null, verification: "direct_response" } }]);
    expect(await sweepPermits(db.pool, 100)).toBe(1);
    expect(await capacity(db.pool)).toEqual({ inUse: 0, counted: 0 });
  });

  test("a vanished holder's permit is held if its call was unanswered, released if it never called", async ({ db }) => {
    const [calling, idle] = await leases(db.pool, 2);
    await persistRequestIdentity(db.pool, calling!, "fl-a", "1");
    await beginInvocation(db.pool, calling!);
    await permitFor(db.pool, calling!, 5);
    await permitFor(db.pool, idle!, 5);
    // Both holders vanish: their permits expire (a 1 s lifetime, ended a moment ago).
    await db.pool.query("UPDATE adapter_permit SET acquired_at = now() - interval '1100 ms', expires_at = now() - interval '100 ms'");

    expect(await sweepPermits(db.pool, 100)).toBe(2);
    const { rows } = await db.pool.query("SELECT step_id, state FROM adapter_permit ORDER BY state");
    expect(rows).toEqual([
      { step_id: calling!.stepId, state: "held" },
      { step_id: idle!.stepId, state: "released" },
    ]);
    expect(await capacity(db.pool)).toEqual({ inUse: 1, counted: 1 });

    // The hold lasts three lifetimes past expiry; after that no call can still be running.
    await db.pool.query("UPDATE adapter_permit SET held_until = now() - interval '1 ms' WHERE state = 'held'");
    expect(await sweepPermits(db.pool, 100)).toBe(1);
    expect(await capacity(db.pool)).toEqual({ inUse: 0, counted: 0 });
  });
});

describe("a destination's declared rate", () => {
  // A version per declaration: a changed rate is a changed contract.
  const rated = (perSecond: number, burst: number) => ({ ...TEST_CONTRACTS.idempotent, name: "dest", version: `${perSecond}-${burst}`, rate: { perSecond, burst } });

  test("grants at most its calls per second, on the database clock, whatever the capacity left; the refusal says when the next slot opens", async ({ db }) => {
    await registerAdapters(db.pool, [rated(3, 3)]);
    const held = await leases(db.pool, 5);
    // One transaction, whose now() does not move: the database clock stands still, so a busy
    // machine's pauses between the calls cannot open a rate slot the test expects closed.
    await inTransaction(db.pool, async (client) => {
      for (const lease of held.slice(0, 3)) await permitFor(client, lease, 100);
      const refusal = await acquirePermit(client, held[3]!, request(100));
      expect(refusal).toMatchObject({ reason: "rate", waitMs: expect.any(Number) });
      const waitMs = (refusal as { waitMs: number }).waitMs;
      expect(waitMs).toBeGreaterThan(0);
      expect(waitMs).toBeLessThanOrEqual(RATE_WINDOW_MS);
      // A refusal takes nothing: the capacity and the slots are as they were.
      expect(await capacity(client)).toEqual({ inUse: 3, counted: 3 });
      // The oldest slot opens a window after its call: move the database's record of the calls back by one.
      await client.query(`UPDATE adapter_call_slot SET called_at = called_at - ${RATE_WINDOW_MS} * interval '1 millisecond' WHERE adapter = 'dest' AND slot = 0`);
      await client.query(`UPDATE adapter_rate SET next_at = next_at - ${RATE_WINDOW_MS} * interval '1 millisecond' WHERE adapter = 'dest'`);
      expect(isPermit(await acquirePermit(client, held[3]!, request(100)))).toBe(true);
      expect(await acquirePermit(client, held[4]!, request(100))).toMatchObject({ reason: "rate" });
    });
  });

  test("lets at most its burst go at once, the rest a 1/perSecond apart", async ({ db }) => {
    await registerAdapters(db.pool, [rated(10, 2)]);
    const held = await leases(db.pool, 3);
    const refusal = await inTransaction(db.pool, async (client) => {
      await permitFor(client, held[0]!, 100);
      await permitFor(client, held[1]!, 100);
      return acquirePermit(client, held[2]!, request(100));
    });
    expect(refusal).toMatchObject({ reason: "rate" });
    expect((refusal as { waitMs: number }).waitMs).toBeLessThanOrEqual(100);
  });

  test("a capacity refusal takes no call slot", async ({ db }) => {
    await registerAdapters(db.pool, [rated(2, 2)]);
    const held = await leases(db.pool, 3);
    await permitFor(db.pool, held[0]!, 1);
    expect(await acquirePermit(db.pool, held[1]!, request(1))).toMatchObject({ reason: "capacity" });
    const { rows } = await db.pool.query<{ calls: string }>("SELECT calls FROM adapter_rate WHERE adapter = 'dest'");
    expect(rows).toEqual([{ calls: "1" }]);
  });

  test("declaring no rate in a later registration lifts it", async ({ db }) => {
    await registerAdapters(db.pool, [rated(1, 1)]);
    await registerAdapters(db.pool, [{ ...TEST_CONTRACTS.idempotent, name: "dest", version: "unrated" }]);
    const held = await leases(db.pool, 3);
    for (const lease of held) await permitFor(db.pool, lease, 100);
  });
});
