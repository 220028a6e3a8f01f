/**
 * The deadline hierarchy, each boundary from both sides: adapter timeout < attempt deadline;
 * lease TTL and renewal cadence; workflow deadline; attempt budget. Each deadline does its own
 * job, so each is tested on its own.
 */
import type { Pool } from "pg";
import { afterEach, describe, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import type { WorkflowDefinition } from "@/lib/definitions/workflow";
import { claimSteps } from "@/lib/engine/lease";
import { registerSession } from "@/lib/engine/session";
import { createStepClass, servedFor, testKindOf, truncateEngineTables } from "@/lib/engine/test-support";
import { createWorkflow } from "@/lib/engine/workflow";
import { singleStep, testAdapter, testWorker } from "./test-support";
import type { Worker } from "./worker";

/** A destination that answers at once, with a 3 s timeout per call. */
const timeout3s = testAdapter("timeout-3s", {
  timeoutMs: 3_000,
  invoke: async ({ requestIdentity }) => ({ externalReference: `ref-${requestIdentity}`, result: null }),
});
/** Serves the test steps on timeout3s (the default handler invokes it and concludes with the effect). */
const answersAtOnce = singleStep({ kind: testKindOf(timeout3s.name), adapter: timeout3s });

const running: Worker[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((worker) => worker.stop()));
});

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

function startWorker(pool: Pool, workflows: WorkflowDefinition[]): Worker {
  const worker = testWorker(pool, workflows);
  running.push(worker);
  return worker;
}

async function oneStep(pool: Pool, step: { adapter: string; stepClass: string; attemptBudget?: number }, deadlineAt: Date | null = null) {
  const created = await createWorkflow(pool, {
    kind: testKindOf(step.adapter),
    input: {},
    requester: "test",
    deadlineAt,
    steps: [{ name: "only", ...step }],
  });
  return created.stepIds.get("only")!;
}

async function stepSummary(pool: Pool, stepId: string) {
  const { rows } = await pool.query(
    `SELECT s.state, s.attempts_started,
            (SELECT count(*)::int FROM attempt a WHERE a.step_id = s.id AND a.invocation_began_at IS NOT NULL) AS invocations,
            (SELECT a.outcome_reason FROM attempt a WHERE a.step_id = s.id ORDER BY a.fencing_term DESC LIMIT 1) AS last_reason
     FROM step s WHERE s.id = $1`,
    [stepId],
  );
  return rows[0] as { state: string; attempts_started: number; invocations: number; last_reason: string | null };
}

describe("adapter timeout < attempt deadline", () => {
  test("a call whose timeout does not fit inside the attempt deadline is never made", async ({ db }) => {
    // A 3,000 ms timeout against 3,700 ms less 500 ms grace and the worker's 200 ms margin
    // (a fifth of the TTL): not strictly inside.
    await createStepClass(db.pool, "tight", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 3_700, graceMs: 500 });
    const stepId = await oneStep(db.pool, { adapter: timeout3s.name, stepClass: "tight", attemptBudget: 1 });
    await startWorker(db.pool, [answersAtOnce]).start();
    await vi.waitFor(async () => expect((await stepSummary(db.pool, stepId)).state).toBe("failed"), { timeout: 10_000 });
    const summary = await stepSummary(db.pool, stepId);
    expect(summary.invocations).toBe(0);
    expect(summary.last_reason).toMatch(/deadline hierarchy: adapter timeout-3s times out after 3000 ms, not inside the 3000 ms/);
  });

  test("with the call's timeout inside the attempt's window, the call is made", async ({ db }) => {
    // 100 ms beyond the boundary: the time from claim to call comes out of the same window.
    await createStepClass(db.pool, "fits", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 3_800, graceMs: 500 });
    const stepId = await oneStep(db.pool, { adapter: timeout3s.name, stepClass: "fits", attemptBudget: 1 });
    await startWorker(db.pool, [answersAtOnce]).start();
    await vi.waitFor(async () => expect((await stepSummary(db.pool, stepId)).state).toBe("completed"), { timeout: 10_000 });
    expect((await stepSummary(db.pool, stepId)).invocations).toBe(1);
  });
});

describe("lease TTL and renewal cadence", () => {
  test("a step class must renew strictly before its lease expires", async ({ db }) => {
    await expect(createStepClass(db.pool, "renews-at-expiry", { leaseTtlMs: 1_000, renewEveryMs: 1_000, attemptDeadlineMs: 5_000, graceMs: 100 })).rejects.toThrow(
      /step_class_renew_before_expiry/,
    );
    await expect(createStepClass(db.pool, "renews-just-before", { leaseTtlMs: 1_000, renewEveryMs: 999, attemptDeadlineMs: 5_000, graceMs: 100 })).resolves.toBeUndefined();
  });

  test("grace must leave time inside the attempt deadline", async ({ db }) => {
    await expect(createStepClass(db.pool, "all-grace", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 5_000, graceMs: 5_000 })).rejects.toThrow(
      /step_class_grace_inside_deadline/,
    );
    await expect(createStepClass(db.pool, "some-grace", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 5_000, graceMs: 4_999 })).resolves.toBeUndefined();
  });

  test("a lease never reaches past the attempt deadline minus grace, however long its TTL", async ({ db }) => {
    await createStepClass(db.pool, "long-ttl", { leaseTtlMs: 60_000, renewEveryMs: 1_000, attemptDeadlineMs: 2_000, graceMs: 500 });
    const short = await createStepClass(db.pool, "short-ttl", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 2_000, graceMs: 500 }).then(() => "short-ttl");
    await oneStep(db.pool, { adapter: "t", stepClass: "long-ttl" });
    await oneStep(db.pool, { adapter: "u", stepClass: short });
    const session = await registerSession(db.pool, "direct");
    const [capped] = await claimSteps(db.pool, session, servedFor("t"), 1);
    const [plain] = await claimSteps(db.pool, session, servedFor("u"), 1);
    expect(capped!.expiresAt.getTime() - capped!.dbNow.getTime()).toBe(1_500);
    expect(plain!.expiresAt.getTime() - plain!.dbNow.getTime()).toBe(1_000);
  });
});

describe("workflow deadline", () => {
  test("a step is claimed while its workflow's deadline is ahead, and not once it has passed", async ({ db }) => {
    const { rows } = await db.pool.query<{ now: Date }>("SELECT now()");
    const dbNow = rows[0]!.now.getTime();
    await oneStep(db.pool, { adapter: "ahead", stepClass: "pure" }, new Date(dbNow + 60_000));
    await oneStep(db.pool, { adapter: "passed", stepClass: "pure" }, new Date(dbNow - 1));
    const session = await registerSession(db.pool, "direct");
    expect(await claimSteps(db.pool, session, servedFor("ahead"), 1)).toHaveLength(1);
    expect(await claimSteps(db.pool, session, servedFor("passed"), 1)).toHaveLength(0);
  });
});

describe("attempt budget", () => {
  const fails = singleStep({
    kind: testKindOf("fails"),
    run: async () => {
      throw new Error("not today");
    },
  });

  test("a budget of 2 allows exactly one retry, then the step fails", async ({ db }) => {
    await createStepClass(db.pool, "quick", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 10_000, graceMs: 500 });
    const twice = await oneStep(db.pool, { adapter: "fails", stepClass: "quick", attemptBudget: 2 });
    const once = await oneStep(db.pool, { adapter: "fails", stepClass: "quick", attemptBudget: 1 });
    await startWorker(db.pool, [fails]).start();
    await vi.waitFor(async () => {
      expect((await stepSummary(db.pool, twice)).state).toBe("failed");
      expect((await stepSummary(db.pool, once)).state).toBe("failed");
    }, { timeout: 10_000 });
    expect((await stepSummary(db.pool, twice)).attempts_started).toBe(2);
    expect((await stepSummary(db.pool, once)).attempts_started).toBe(1);
  });
});
