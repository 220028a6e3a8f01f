/**
 * The worker runtime in-process against real PostgreSQL: a handler must end with an explicit
 * outcome (silence, a throw, or running past the deadline are failures, each with its reason),
 * a DAG runs in dependency order, and a graceful stop hands back work that has not begun.
 */
import { describe, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { createStepClass, truncateEngineTables } from "@/lib/engine/test-support";
import { createWorkflow } from "@/lib/engine/workflow";
import { directCoordinator } from "./coordinator";
import type { StepHandler } from "./handler";
import { pureHandler } from "./handlers/pure";
import { Worker } from "./worker";

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

function startWorker(pool: import("pg").Pool, handler: StepHandler) {
  const worker = new Worker({
    coordinator: directCoordinator(pool),
    handlers: new Map([["t", handler]]),
    pollIntervalMs: 100,
    recoveryIntervalMs: 100,
    shutdownTimeoutMs: 2_000,
    log: () => undefined,
  });
  return worker;
}

async function attemptOutcomes(pool: import("pg").Pool, stepId: string) {
  const { rows } = await pool.query<{ outcome: string | null; outcome_reason: string | null }>(
    "SELECT outcome, outcome_reason FROM attempt WHERE step_id = $1 ORDER BY fencing_term",
    [stepId],
  );
  return rows;
}

const oneStep = (operation: string, stepClass = "pure") => ({
  kind: "test",
  input: {},
  requester: "test",
  steps: [{ name: "only", adapter: "t", operation, stepClass, attemptBudget: 1 }],
});

describe("terminal outcomes", () => {
  for (const [label, handler, reason] of [
    ["returns nothing", (async () => undefined) as unknown as StepHandler, "handler returned nothing"],
    ["throws", (async () => { throw new Error("boom"); }) as StepHandler, "handler threw: boom"],
    ["returns no-action-needed without a reason", (async () => ({ kind: "no_action_needed", reason: "" })) as StepHandler, "no_action_needed outcome without a reason"],
  ] as const) {
    test(`a handler that ${label} ends as a failure, never a success`, async ({ db }) => {
      const created = await createWorkflow(db.pool, oneStep("x"));
      const stepId = created.stepIds.get("only")!;
      const worker = startWorker(db.pool, handler);
      await worker.start();
      await vi.waitFor(async () => expect(await attemptOutcomes(db.pool, stepId)).toEqual([{ outcome: "failed", outcome_reason: reason }]), { timeout: 10_000 });
      await worker.stop();
      const { rows } = await db.pool.query("SELECT (SELECT count(*)::int FROM receipt WHERE step_id = $1) AS receipts, (SELECT state FROM step WHERE id = $1) AS state", [stepId]);
      // Budget of 1 spent before any invocation: the step fails for good, without a receipt.
      expect(rows[0]).toEqual({ receipts: 0, state: "failed" });
    });
  }

  test("skip and no-action-needed complete the step without an effect, with their reason", async ({ db }) => {
    const created = await createWorkflow(db.pool, oneStep("x"));
    const stepId = created.stepIds.get("only")!;
    const worker = startWorker(db.pool, async () => ({ kind: "skip", reason: "nothing due this tick" }));
    await worker.start();
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query("SELECT s.state, r.verification_method, a.outcome, a.outcome_reason FROM step s JOIN receipt r ON r.step_id = s.id JOIN attempt a ON a.id = r.attempt_id WHERE s.id = $1", [stepId]);
      expect(rows[0]).toEqual({ state: "completed_without_effect", verification_method: "no_action_needed", outcome: "skip", outcome_reason: "nothing due this tick" });
    }, { timeout: 10_000 });
    await worker.stop();
  });

  test("a handler running past the attempt deadline is recorded as a failure: deadline exceeded", async ({ db }) => {
    await createStepClass(db.pool, "short", { leaseTtlMs: 1_000, renewEveryMs: 300, attemptDeadlineMs: 2_000, graceMs: 300 });
    const created = await createWorkflow(db.pool, oneStep("x", "short"));
    const stepId = created.stepIds.get("only")!;
    const worker = startWorker(db.pool, () => new Promise(() => undefined));
    await worker.start();
    await vi.waitFor(async () => expect(await attemptOutcomes(db.pool, stepId)).toEqual([{ outcome: "failed", outcome_reason: "deadline exceeded" }]), { timeout: 10_000 });
    await worker.stop();
  });
});

test("a workflow's steps run in dependency order and the workflow completes", async ({ db }) => {
  const created = await createWorkflow(db.pool, {
    kind: "test",
    input: {},
    requester: "test",
    steps: [
      { name: "a", adapter: "t", operation: "noop", stepClass: "pure" },
      { name: "b", adapter: "t", operation: "noop", stepClass: "pure", dependsOn: ["a"] },
      { name: "c", adapter: "t", operation: "noop", stepClass: "pure", dependsOn: ["a", "b"] },
    ],
  });
  const worker = startWorker(db.pool, pureHandler);
  await worker.start();
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT status FROM workflow WHERE id = $1", [created.workflowId]);
    expect(rows[0].status).toBe("completed");
  }, { timeout: 10_000 });
  await worker.stop();
  const { rows } = await db.pool.query<{ name: string }>(
    "SELECT s.name FROM receipt r JOIN step s ON s.id = r.step_id WHERE s.workflow_id = $1 ORDER BY r.created_at, s.position",
    [created.workflowId],
  );
  expect(rows.map((r) => r.name)).toEqual(["a", "b", "c"]);
});

test("a graceful stop releases work whose invocation has not begun", async ({ db }) => {
  const created = await createWorkflow(db.pool, oneStep("x"));
  const stepId = created.stepIds.get("only")!;
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  const worker = startWorker(db.pool, (context) => {
    started();
    return new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)));
  });
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
