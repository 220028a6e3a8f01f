/**
 * Claim and renewal against real PostgreSQL, judged by the database clock. Boundary cases are the
 * fixtures: a lease 1 ms before its expiry, exactly at it, and 1 ms after. Inside one transaction
 * now() is fixed, so "exactly at expiry" is exact.
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps, renewLeases } from "./lease";
import { registerSession } from "./session";
import { createSingleStepWorkflows, setLeaseExpiry, servedFor } from "./test-support";
import { cancelWorkflow } from "./workflow";
import type { ClaimedStep } from "./types";

const pure = { adapter: "pure", operation: "noop", stepClass: "pure" } as const;

async function claimOne(pool: import("pg").Pool, session: string): Promise<ClaimedStep> {
  const [claimed] = await claimSteps(pool, session, servedFor("pure"), 1);
  if (!claimed) throw new Error("nothing to claim");
  return claimed;
}

describe("claim", () => {
  test("bumps the fencing term and writes lease, acquired event and attempt in one statement", async ({ db }) => {
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, pure);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimOne(db.pool, session);

    expect(claimed.stepId).toBe(stepId);
    expect(claimed.fencingTerm).toBe(1n);
    expect(claimed.expiresAt.getTime() - claimed.dbNow.getTime()).toBe(5_000);
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM lease WHERE step_id = $1 AND ended_at IS NULL) AS open_leases,
              (SELECT count(*)::int FROM lease_history WHERE step_id = $1 AND kind = 'acquired') AS acquired,
              (SELECT count(*)::int FROM attempt WHERE step_id = $1 AND fencing_term = 1 AND checkpoint = 'created') AS attempts,
              (SELECT state FROM step WHERE id = $1) AS state`,
      [stepId],
    );
    expect(rows[0]).toEqual({ open_leases: 1, acquired: 1, attempts: 1, state: "leased" });
  });

  test("never hands the same step to two sessions", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, pure);
    const [a, b] = [await registerSession(db.pool, "direct"), await registerSession(db.pool, "direct")];
    const claims = await Promise.all([claimSteps(db.pool, a, servedFor("pure"), 5), claimSteps(db.pool, b, servedFor("pure"), 5)]);
    expect(claims.flat()).toHaveLength(1);
  });

  test("a limit larger than one claim statement takes is met by several, each step claimed once", async ({ db }) => {
    const split = { adapter: "claim-split", operation: "noop", stepClass: "pure" } as const;
    const stepIds = await createSingleStepWorkflows(db.pool, 150, split);
    const session = await registerSession(db.pool, "direct");
    const client = await db.pool.connect();
    let first: ClaimedStep[];
    let prepared: string[];
    try {
      first = await claimSteps(client, session, servedFor("claim-split"), 100);
      const { rows } = await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'fl_claim%' ORDER BY name");
      prepared = rows.map((row) => row.name);
    } finally {
      client.release();
    }
    // One statement per limit: the limits a connection prepares stay few.
    expect(prepared).toEqual(expect.arrayContaining(["fl_claim_ready_steps_36", "fl_claim_ready_steps_64"]));
    expect(prepared).not.toContain("fl_claim_ready_steps_100");
    const second = await claimSteps(db.pool, session, servedFor("claim-split"), 100);
    expect(first).toHaveLength(100);
    expect(second).toHaveLength(50);
    expect(new Set([...first, ...second].map((step) => step.stepId))).toEqual(new Set(stepIds));
    expect(await claimSteps(db.pool, session, servedFor("claim-split"), 100)).toEqual([]);
  });

  test("skips steps of a cancelled workflow and steps not yet eligible", async ({ db }) => {
    const [cancelled, waiting] = await createSingleStepWorkflows(db.pool, 2, pure);
    await db.pool.query("UPDATE step SET next_eligible_at = now() + interval '1 minute' WHERE id = $1", [waiting]);
    const { rows } = await db.pool.query<{ workflow_id: string }>("SELECT workflow_id FROM step WHERE id = $1", [cancelled]);
    await cancelWorkflow(db.pool, rows[0]!.workflow_id, "test");
    const session = await registerSession(db.pool, "direct");
    expect(await claimSteps(db.pool, session, servedFor("pure"), 5)).toEqual([]);
  });

  test("the claim's guarded step update grants at most one open lease per step (invariant 1)", async ({ db }) => {
    // Attempts are partitioned by id, so no unique index can say it: the claim, the only writer
    // of attempts, moves the step from ready to leased under its row lock, and a claim that finds
    // the step leased, or locked by a concurrent claim, grants nothing.
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, pure);
    const sessions = await Promise.all([1, 2, 3, 4].map(() => registerSession(db.pool, "direct")));
    const claims = await Promise.all(sessions.map((session) => claimSteps(db.pool, session, servedFor("pure"), 1)));
    expect(claims.flat()).toHaveLength(1);
    expect(await claimSteps(db.pool, sessions[0]!, servedFor("pure"), 1)).toEqual([]);
    const { rows } = await db.pool.query<{ open: number }>("SELECT count(*)::int AS open FROM attempt WHERE step_id = $1 AND ended_at IS NULL", [stepId]);
    expect(rows[0]!.open).toBe(1);
  });
});

describe("renew", () => {
  test("a renewal that waits on a concurrent revoke names the revoke as its reason", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, pure);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimOne(db.pool, session);
    const revoker = await db.pool.connect();
    try {
      await revoker.query("BEGIN");
      await revoker.query("UPDATE lease SET ended_at = now(), end_reason = 'revoked' WHERE step_id = $1", [claimed.stepId]);
      const renewal = renewLeases(db.pool, session, [{ stepId: claimed.stepId, fencingTerm: claimed.fencingTerm, sessionId: session, checkpointVersion: claimed.checkpointVersion }]);
      // The renewal's snapshot still shows an open lease; it must wait for the revoke and read it.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await revoker.query("COMMIT");
      expect(await renewal).toEqual([{ stepId: claimed.stepId, renewed: false, reason: "revoked" }]);
    } finally {
      revoker.release();
    }
  });

  test("extends the lease from the database clock and records a renewed event", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, pure);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimOne(db.pool, session);
    const [result] = await renewLeases(db.pool, session, [{ stepId: claimed.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 }]);
    expect(result).toMatchObject({ renewed: true });
    if (!result?.renewed) throw new Error("unreachable");
    expect(result.expiresAt.getTime() - result.dbNow.getTime()).toBe(5_000);
    const { rows } = await db.pool.query("SELECT kind FROM lease_history WHERE step_id = $1 ORDER BY at, id", [claimed.stepId]);
    expect(rows.map((r) => r.kind)).toEqual(["acquired", "renewed"]);
  });

  for (const [label, offsetMs, renewed] of [
    ["1 ms before expiry", 1, true],
    ["exactly at expiry", 0, false],
    ["1 ms after expiry", -1, false],
  ] as const) {
    test(`${label}: renewal ${renewed ? "granted" : "refused as expired"}`, async ({ db }) => {
      await createSingleStepWorkflows(db.pool, 1, pure);
      const session = await registerSession(db.pool, "direct");
      const claimed = await claimOne(db.pool, session);
      const client = await db.pool.connect();
      try {
        await client.query("BEGIN");
        await setLeaseExpiry(client, claimed.stepId, offsetMs);
        const [result] = await renewLeases(client, session, [{ stepId: claimed.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 }]);
        await client.query("COMMIT");
        expect(result?.renewed).toBe(renewed);
        if (result && !result.renewed) expect(result.reason).toBe("expired");
      } finally {
        client.release();
      }
    });
  }

  test("never reaches past the attempt deadline minus its grace", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, pure);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimOne(db.pool, session);
    // 3 s of deadline left, 1 s of grace: the renewal may reach 2 s ahead, not the 5 s TTL.
    await db.pool.query("UPDATE attempt SET deadline_at = now() + interval '3 seconds' WHERE id = $1", [claimed.attemptId]);
    const [result] = await renewLeases(db.pool, session, [{ stepId: claimed.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 }]);
    if (!result?.renewed) throw new Error("renewal refused");
    const { rows } = await db.pool.query<{ gap_ms: number }>(
      "SELECT extract(epoch FROM (a.deadline_at - l.expires_at)) * 1000 AS gap_ms FROM lease l JOIN attempt a ON a.id = l.attempt_id WHERE l.step_id = $1",
      [claimed.stepId],
    );
    expect(Number(rows[0]!.gap_ms)).toBeCloseTo(1_000, 0);
  });

  test("refuses with a reason: superseded, workflow inactive, deadline reached, policy changed, checkpoint version mismatch", async ({ db }) => {
    const steps = await createSingleStepWorkflows(db.pool, 5, pure);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimSteps(db.pool, session, servedFor("pure"), 5);
    const byStep = new Map(claimed.map((c) => [c.stepId, c]));
    const [superseded, cancelled, deadline, policy, checkpoint] = steps.map((id) => byStep.get(id)!);

    // As after recovery ended term 1 and another worker claimed term 2.
    await db.pool.query("UPDATE lease SET ended_at = now(), end_reason = 'expired' WHERE step_id = $1", [superseded!.stepId]);
    await db.pool.query("UPDATE step SET fencing_term = 2 WHERE id = $1", [superseded!.stepId]);
    await cancelWorkflow(db.pool, cancelled!.workflowId, "customer asked");
    await db.pool.query("UPDATE attempt SET deadline_at = now() + interval '500 milliseconds' WHERE id = $1", [deadline!.attemptId]);
    await db.pool.query("UPDATE lease SET policy_version = 0 WHERE step_id = $1", [policy!.stepId]);

    const results = await renewLeases(db.pool, session, [
      { stepId: superseded!.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 },
      { stepId: cancelled!.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 },
      { stepId: deadline!.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 },
      { stepId: policy!.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 1 },
      { stepId: checkpoint!.stepId, fencingTerm: 1n, sessionId: session, checkpointVersion: 7 },
    ]);
    const reasons = new Map(results.map((r) => [r.stepId, r.renewed ? "renewed" : r.reason]));
    expect(reasons.get(superseded!.stepId)).toBe("superseded");
    expect(reasons.get(cancelled!.stepId)).toBe("workflow_inactive");
    expect(reasons.get(deadline!.stepId)).toBe("deadline_reached");
    expect(reasons.get(policy!.stepId)).toBe("policy_changed");
    expect(reasons.get(checkpoint!.stepId)).toBe("checkpoint_version_mismatch");
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM lease_event WHERE kind = 'renewal_refused' AND step_id = ANY($1::uuid[])",
      [steps],
    );
    expect(rows[0].n).toBe(5);
  });

  test("refuses a session that is not the owner", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, pure);
    const [owner, other] = [await registerSession(db.pool, "direct"), await registerSession(db.pool, "direct")];
    const claimed = await claimOne(db.pool, owner);
    const [result] = await renewLeases(db.pool, other, [{ stepId: claimed.stepId, fencingTerm: 1n, sessionId: other, checkpointVersion: 1 }]);
    expect(result).toMatchObject({ renewed: false, reason: "not_owner" });
  });
});
