/**
 * Epoch transitions and term overflow against real PostgreSQL. The destinations here are small
 * doubles of a fenced destination's epoch administration (the real one is exercised by the
 * restore drill, lib/scenarios/restore.scenario.test.ts).
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import type { Queryable } from "./db";
import { epochStatus, runEpochTransition, type EpochDestination } from "./epoch";
import { TransitionInProgressError } from "./errors";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import { MAX_TERM } from "./sql/lease";
import { createSingleStepWorkflows, truncateEngineTables, servedFor } from "./test-support";

function fencedDouble(adapter: string, options: { highestSeen?: bigint; failInstall?: boolean; acceptsStale?: boolean } = {}) {
  let installed = 0n;
  const destination: EpochDestination = {
    adapter,
    state: async () => ({ installed, highestSeen: options.highestSeen ?? installed }),
    install: async (epoch) => {
      if (options.failInstall) throw new Error(`${adapter} is unreachable`);
      installed = epoch > installed ? epoch : installed;
      return { installed };
    },
    probeRejectsOlderThan: async (epoch) => !options.acceptsStale && installed >= epoch,
  };
  return destination;
}

const currentEpoch = async (pool: import("pg").Pool) => (await pool.query<{ e: string }>("SELECT fl_current_epoch()::text AS e")).rows[0]!.e;

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE epoch_transition, destination_block; DELETE FROM epoch WHERE id > 1");
});

describe("epoch transition", () => {
  test("opens an epoch above any the database or a destination has seen, installs it, and resumes", async ({ db }) => {
    const result = await runEpochTransition(db.pool, {
      reason: "restored from backup",
      requestedBy: "test",
      destinations: [fencedDouble("fenced", { highestSeen: 5n })],
      drainTimeoutMs: 0,
    });
    expect(result).toMatchObject({ fromEpoch: 1n, toEpoch: 6n, state: "completed", destinations: { fenced: { installed: true } } });
    expect(await currentEpoch(db.pool)).toBe("6");
    // Claims resume, and new leases carry the new epoch.
    await createSingleStepWorkflows(db.pool, 1, { adapter: "fenced", operation: "o", stepClass: "pure" });
    const [claimed] = await claimSteps(db.pool, await registerSession(db.pool, "direct"), servedFor("fenced"), 1);
    expect(claimed!.epoch).toBe(6n);
  });

  // The console records a transition (its audit entry) through recordOutcome: what the hook
  // writes must commit with the outcome, and neither without the other.
  test("recordOutcome runs inside the transaction that records the outcome, which commits with what it writes or not at all", async ({ db }) => {
    await db.pool.query("CREATE TABLE outcome_probe (transition_id text PRIMARY KEY, state text NOT NULL)");
    const stateOf = async (on: Queryable, id: string) => (await on.query<{ state: string }>("SELECT state FROM epoch_transition WHERE id = $1", [id])).rows[0]!.state;
    const seen: { reason: string; inside: string; outside: string }[] = [];
    const result = await runEpochTransition(db.pool, {
      reason: "restore",
      requestedBy: "test",
      destinations: [fencedDouble("fenced")],
      drainTimeoutMs: 0,
      recordOutcome: async (client, outcome) => {
        seen.push({ reason: outcome.reason, inside: await stateOf(client, outcome.transitionId), outside: await stateOf(db.pool, outcome.transitionId) });
        await client.query("INSERT INTO outcome_probe VALUES ($1, $2)", [outcome.transitionId, outcome.state]);
      },
    });
    expect(seen).toEqual([{ reason: "restore", inside: "completed", outside: "installing" }]);
    expect((await db.pool.query("SELECT transition_id, state FROM outcome_probe")).rows).toEqual([{ transition_id: result.transitionId, state: "completed" }]);

    let failedId = "";
    const failing = runEpochTransition(db.pool, {
      reason: "restore again",
      requestedBy: "test",
      destinations: [],
      drainTimeoutMs: 0,
      recordOutcome: async (client, outcome) => {
        failedId = outcome.transitionId;
        await client.query("INSERT INTO outcome_probe VALUES ($1, $2)", [outcome.transitionId, outcome.state]);
        throw new Error("the audit log is unavailable");
      },
    });
    await expect(failing).rejects.toThrow("the audit log is unavailable");
    expect(await stateOf(db.pool, failedId)).toBe("failed");
    expect((await db.pool.query("SELECT 1 FROM outcome_probe WHERE transition_id = $1", [failedId])).rowCount).toBe(0);
  });

  test("no step is claimed while a transition is in progress, and a second one is refused", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
    await db.pool.query("INSERT INTO epoch_transition (from_epoch, reason, requested_by) VALUES (1, 'in progress', 'test')");
    const session = await registerSession(db.pool, "direct");
    expect(await claimSteps(db.pool, session, servedFor("pure"), 1)).toEqual([]);
    await expect(runEpochTransition(db.pool, { reason: "again", requestedBy: "test", destinations: [] })).rejects.toBeInstanceOf(TransitionInProgressError);
    await db.pool.query("UPDATE epoch_transition SET state = 'completed', finished_at = now()");
    expect(await claimSteps(db.pool, session, servedFor("pure"), 1)).toHaveLength(1);
  });

  test("in-flight work is given time, then revoked, and recovery decides each from its evidence", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 2, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const session = await registerSession(db.pool, "direct");
    const [finishing, stuck] = await claimSteps(db.pool, session, servedFor("pure"), 2);
    const transition = runEpochTransition(db.pool, { reason: "drain", requestedBy: "test", destinations: [], drainTimeoutMs: 400 });
    // One attempt finishes inside the drain window under the old epoch; the other never does.
    await commitReceipts(db.pool, session, [
      { lease: { stepId: finishing!.stepId, fencingTerm: finishing!.fencingTerm, sessionId: session }, conclusion: { kind: "effect", externalReference: null, result: null, verification: "direct_response" } },
    ]);
    const result = await transition;
    expect(result.revokedLeases).toBe(1);
    const { rows } = await db.pool.query("SELECT trigger, category FROM recovery_decision WHERE step_id = $1", [stuck!.stepId]);
    expect(rows).toEqual([{ trigger: "lease_revoked", category: "make_ready" }]);
  });

  test("a destination whose installation fails stays blocked until a later transition succeeds there", async ({ db }) => {
    await createSingleStepWorkflows(db.pool, 1, { adapter: "fenced", operation: "o", stepClass: "pure" });
    await createSingleStepWorkflows(db.pool, 1, { adapter: "other", operation: "o", stepClass: "pure" });
    const first = await runEpochTransition(db.pool, {
      reason: "restore",
      requestedBy: "test",
      destinations: [fencedDouble("fenced", { failInstall: true }), fencedDouble("other")],
      drainTimeoutMs: 0,
    });
    expect(first.state).toBe("blocked");
    expect(first.destinations.fenced).toEqual({ installed: false, error: "fenced is unreachable" });
    const session = await registerSession(db.pool, "direct");
    expect(await claimSteps(db.pool, session, servedFor("fenced"), 1)).toEqual([]);
    expect(await claimSteps(db.pool, session, servedFor("other"), 1)).toHaveLength(1);
    const { rows } = await db.pool.query("SELECT adapter, epoch::text, reason FROM destination_block");
    expect(rows).toEqual([{ adapter: "fenced", epoch: "2", reason: "epoch 2 not installed: fenced is unreachable" }]);
    expect(await epochStatus(db.pool)).toMatchObject({ epoch: "2", transition: null, blocked: [{ adapter: "fenced", reason: "epoch 2 not installed: fenced is unreachable" }] });

    const second = await runEpochTransition(db.pool, { reason: "retry", requestedBy: "test", destinations: [fencedDouble("fenced")], drainTimeoutMs: 0 });
    expect(second).toMatchObject({ toEpoch: 3n, state: "completed" });
    expect(await claimSteps(db.pool, session, servedFor("fenced"), 1)).toHaveLength(1);
    expect((await epochStatus(db.pool)).blocked).toEqual([]);
  });

  test("a destination that still accepts the previous epoch after installation stays blocked", async ({ db }) => {
    const result = await runEpochTransition(db.pool, { reason: "restore", requestedBy: "test", destinations: [fencedDouble("fenced", { acceptsStale: true })], drainTimeoutMs: 0 });
    expect(result.destinations.fenced).toEqual({ installed: false, error: "a write from epoch 1 was accepted" });
    expect(result.state).toBe("blocked");
  });
});

describe("fencing term overflow", () => {
  test("a term one below the maximum is granted; at the maximum the step fails closed, never wraps", async ({ db }) => {
    const [nearMax, atMax, ordinary] = await createSingleStepWorkflows(db.pool, 3, { adapter: "pure", operation: "noop", stepClass: "pure" });
    const maxTerm = BigInt(MAX_TERM);
    await db.pool.query("UPDATE step SET fencing_term = $2 WHERE id = $1", [nearMax, (maxTerm - 1n).toString()]);
    await db.pool.query("UPDATE step SET fencing_term = $2 WHERE id = $1", [atMax, maxTerm.toString()]);
    const session = await registerSession(db.pool, "direct");
    const claimed = await claimSteps(db.pool, session, servedFor("pure"), 10);
    expect(new Map(claimed.map((step) => [step.stepId, step.fencingTerm]))).toEqual(new Map([[nearMax!, maxTerm], [ordinary!, 1n]]));
    const { rows } = await db.pool.query("SELECT state, fencing_term::text FROM step WHERE id = $1", [atMax]);
    expect(rows).toEqual([{ state: "ready", fencing_term: MAX_TERM }]);
  });
});
