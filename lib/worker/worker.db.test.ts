/**
 * The worker runtime in-process against real PostgreSQL: a handler must end with an explicit
 * outcome (silence, a throw, or running past the deadline are failures, each with its reason),
 * a DAG runs in dependency order, and a graceful stop hands back work that has not begun.
 */
import { describe, expect, vi } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import type { StepContext } from "@/lib/definitions/context";
import { done, type StepOutcome } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { createStepClass, truncateEngineTables } from "@/lib/engine/test-support";
import { directCoordinator } from "./direct-coordinator";
import { createRequestsOf, oneRequest, singleStep, testAdapter, testWorker } from "./test-support";

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

type Run = (ctx: StepContext<unknown, unknown>) => Promise<StepOutcome>;

/** A one-step workflow with `run` on step class `stepClass`, budget 1, and a worker serving it. */
const oneStep = (run: Run, stepClass = "pure") => singleStep({ kind: `test-${stepClass}`, class: stepClass, attemptBudget: 1, run });

async function attemptOutcomes(pool: import("pg").Pool, stepId: string) {
  const { rows } = await pool.query<{ outcome: string | null; outcome_reason: string | null }>(
    "SELECT outcome, outcome_reason FROM attempt WHERE step_id = $1 ORDER BY fencing_term",
    [stepId],
  );
  return rows;
}

describe("terminal outcomes", () => {
  for (const [label, handler, reason] of [
    ["returns nothing", (async () => undefined) as unknown as Run, "handler returned nothing"],
    ["throws", (async () => { throw new Error("boom"); }) as Run, "handler threw: boom"],
    ["returns no-action-needed without a reason", (async () => ({ kind: "no_action_needed", reason: "" })) as Run, "no_action_needed outcome without a reason"],
  ] as const) {
    test(`a handler that ${label} ends as a failure, never a success`, async ({ db }) => {
      const workflow = oneStep(handler);
      const stepId = await oneRequest(db.pool, workflow);
      const worker = testWorker(db.pool, [workflow]);
      await worker.start();
      await vi.waitFor(async () => expect(await attemptOutcomes(db.pool, stepId)).toEqual([{ outcome: "failed", outcome_reason: reason }]), { timeout: 10_000 });
      await worker.stop();
      const { rows } = await db.pool.query("SELECT (SELECT count(*)::int FROM receipt WHERE step_id = $1) AS receipts, (SELECT state FROM step WHERE id = $1) AS state", [stepId]);
      // Budget of 1 spent before any invocation: the step fails for good, without a receipt.
      expect(rows[0]).toEqual({ receipts: 0, state: "failed" });
    });
  }

  test("skip and no-action-needed complete the step without an effect, with their reason", async ({ db }) => {
    const workflow = oneStep(async () => ({ kind: "skip", reason: "nothing due this tick" }));
    const stepId = await oneRequest(db.pool, workflow);
    const worker = testWorker(db.pool, [workflow]);
    await worker.start();
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT s.state, r.verification_method, a.outcome, a.outcome_reason FROM step s JOIN receipt r ON r.step_id = s.id JOIN attempt a ON a.id = r.attempt_id WHERE s.id = $1", [stepId]);
      expect(rows[0]).toEqual({ state: "completed_without_effect", verification_method: "no_action_needed", outcome: "skip", outcome_reason: "nothing due this tick" });
    }, { timeout: 10_000 });
    await worker.stop();
  });

  test("a handler running past the attempt deadline is recorded as a failure: deadline exceeded", async ({ db }) => {
    await createStepClass(db.pool, "short", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 2_000, graceMs: 300 });
    const workflow = oneStep(() => new Promise(() => undefined), "short");
    const stepId = await oneRequest(db.pool, workflow);
    const worker = testWorker(db.pool, [workflow]);
    await worker.start();
    await vi.waitFor(async () => expect(await attemptOutcomes(db.pool, stepId)).toEqual([{ outcome: "failed", outcome_reason: "deadline exceeded" }]), { timeout: 10_000 });
    await worker.stop();
  });
});

test("a workflow's steps run in dependency order and the workflow completes", async ({ db }) => {
  const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };
  const workflow = defineWorkflow({
    kind: "test-dag",
    version: 1,
    input: z.unknown(),
    steps: {
      a: { milestone, run: async () => done() },
      b: { milestone, dependsOn: ["a"], run: async () => done() },
      c: { milestone, dependsOn: ["a", "b"], run: async () => done() },
    },
  });
  const [created] = await createRequestsOf(db.pool, workflow, [{}]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [created!.workflowId]);
    expect(rows[0].status).toBe("completed");
  }, { timeout: 10_000 });
  await worker.stop();
  const { rows } = await db.pool.query<{ name: string }>(
    "SELECT s.name FROM receipt r JOIN step s ON s.id = r.step_id WHERE s.workflow_id = $1 ORDER BY r.created_at, s.position",
    [created!.workflowId],
  );
  expect(rows.map((r) => r.name)).toEqual(["a", "b", "c"]);
});

// A step builds on what its dependencies concluded, read from their receipts, not recomputed.
test("a step reads the results its dependencies' receipts hold, and only theirs", async ({ db }) => {
  const milestone = { upcoming: "Step", current: "Working on it", done: "Done" };
  const seen: Record<string, unknown>[] = [];
  const workflow = defineWorkflow({
    kind: "test-results",
    version: 1,
    input: z.object({ n: z.number() }),
    steps: {
      double: { milestone, run: async (ctx) => done({ doubled: ctx.input.n * 2 }) },
      nothing: { milestone, run: async () => ({ kind: "skip", reason: "not needed" }) },
      sum: {
        milestone,
        dependsOn: ["double", "nothing"],
        run: async (ctx) => {
          seen.push({ ...ctx.results });
          return done({ total: (ctx.results.double as { doubled: number }).doubled + 1 });
        },
      },
      last: { milestone, dependsOn: ["sum"], run: async (ctx) => (seen.push({ ...ctx.results }), done()) },
    },
  });
  await createRequestsOf(db.pool, workflow, [{ n: 20 }]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 10_000 });
  await worker.stop();
  expect(seen).toEqual([{ double: { doubled: 40 }, nothing: null }, { sum: { total: 41 } }]);
});

test("a graceful stop releases work whose invocation has not begun", async ({ db }) => {
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  const workflow = oneStep((context) => {
    started();
    return new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)));
  });
  const stepId = await oneRequest(db.pool, workflow);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  await handlerStarted;
  await worker.stop("SIGTERM");
  const { rows } = await db.pool.query(
    `SELECT s.state, s.attempts_started, l.end_reason, a.outcome,
            (SELECT stopped_at IS NOT NULL FROM worker_session WHERE id = l.owner_session_id) AS session_stopped
     FROM step s JOIN lease l ON l.step_id = s.id JOIN attempt a ON a.id = l.attempt_id WHERE s.id = $1`,
    [stepId],
  );
  expect(rows[0]).toEqual({ state: "ready", attempts_started: 0, end_reason: "released", outcome: "released", session_stopped: true });
});

// The destination's answer is evidence only the worker holds: a database that is briefly away when
// it arrives (a restart, a dropped connection) must not cost it, or recovery decides without it.
test("an answer that cannot be recorded at once is recorded when the database is back, and the step completes from it", async ({ db }) => {
  let calls = 0;
  const adapter = testAdapter("answers-once", { invoke: async () => ((calls += 1), { externalReference: "ref-1", result: { ok: true } }) });
  const workflow = singleStep({ kind: "test-answer-kept", adapter, attemptBudget: 1 });
  const stepId = await oneRequest(db.pool, workflow);
  const coordinator = directCoordinator(db.pool);
  let refusals = 2;
  const worker = testWorker(db.pool, [workflow], {
    coordinator: {
      ...coordinator,
      observeResponse: async (...args) => {
        if (refusals > 0) {
          refusals -= 1;
          throw new Error("Connection terminated unexpectedly");
        }
        return coordinator.observeResponse(...args);
      },
    },
  });
  await worker.start();
  try {
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT s.state, r.verification_method, r.external_reference FROM step s JOIN receipt r ON r.step_id = s.id WHERE s.id = $1", [stepId]);
      expect(rows).toEqual([{ state: "completed", verification_method: "direct_response", external_reference: "ref-1" }]);
    }, { timeout: 10_000 });
  } finally {
    await worker.stop();
  }
  expect(refusals).toBe(0);
  expect(calls).toBe(1);
  expect(await attemptOutcomes(db.pool, stepId)).toEqual([{ outcome: "effect", outcome_reason: null }]);
});
