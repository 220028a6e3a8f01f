/**
 * The outbox: every change an app cares about — completed, needs review, review resolved (and
 * how), could not be completed, cancelled — writes exactly one outbox event in the statement of
 * the change, so an event exists exactly when its change committed: a rolled-back change leaves
 * none, and repeating a change that already happened writes no second one.
 */
import type { Pool } from "pg";
import { describe, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { run } from "@/lib/engine/db";
import * as workflowSql from "@/lib/engine/sql/workflow";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { resolveReviewCase } from "@/lib/review/resolve";
import { caseUnderReview } from "@/lib/review/test-support";
import { createRequestsOf, singleStep, testWorker } from "@/lib/worker/test-support";
import { done } from "@/lib/definitions/outcome";

const events = async (pool: Pool, workflowId: string) =>
  (await pool.query<{ type: string; detail: unknown }>("SELECT type, detail FROM outbox_event WHERE workflow_id = $1 ORDER BY created_at, type", [workflowId])).rows;

describe("each change writes one event", () => {
  test("a request whose last step completes: request.completed", async ({ db }) => {
    const workflow = singleStep({ kind: "outbox-done", run: async () => done() });
    const [request] = await createRequestsOf(db.pool, workflow, [{}, {}]);
    const worker = testWorker(db.pool, [workflow]);
    await worker.start();
    await vi.waitFor(async () => expect((await db.pool.query("SELECT status FROM workflow WHERE id = $1", [request!.workflowId])).rows[0].status).toBe("completed"), { timeout: 10_000 });
    await worker.stop();
    expect(await events(db.pool, request!.workflowId)).toEqual([{ type: "request.completed", detail: null }]);
  });

  test("a request whose step fails for good: request.could_not_be_completed", async ({ db }) => {
    const workflow = singleStep({ kind: "outbox-fails", attemptBudget: 1, run: async () => { throw new Error("boom"); } });
    const [request] = await createRequestsOf(db.pool, workflow, [{}]);
    const worker = testWorker(db.pool, [workflow]);
    await worker.start();
    await vi.waitFor(async () => expect((await db.pool.query("SELECT status FROM workflow WHERE id = $1", [request!.workflowId])).rows[0].status).toBe("failed"), { timeout: 10_000 });
    await worker.stop();
    expect(await events(db.pool, request!.workflowId)).toEqual([{ type: "request.could_not_be_completed", detail: null }]);
  });

  test("an unknown outcome opens a case: request.needs_review", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    expect(await events(db.pool, review.workflowId)).toEqual([{ type: "request.needs_review", detail: { reviewCaseId: review.caseId } }]);
  });

  for (const [resolution, extra, then] of [
    ["confirm_delivered", { externalReference: "opq_1" }, []],
    ["confirm_not_delivered", {}, []],
    ["abandon", { customerReason: "We could not confirm it" }, [{ type: "request.could_not_be_completed", detail: null }]],
  ] as const) {
    test(`resolving a case by ${resolution}: request.review_resolved with the resolution, once however often it is repeated`, async ({ db }) => {
      const review = await caseUnderReview(db.pool);
      const body = { resolution, version: review.version, note: "checked", ...extra } as Parameters<typeof resolveReviewCase>[2];
      await resolveReviewCase(db.pool, review.caseId, body, "grace");
      await resolveReviewCase(db.pool, review.caseId, body, "grace");
      expect(await events(db.pool, review.workflowId)).toEqual([
        { type: "request.needs_review", detail: { reviewCaseId: review.caseId } },
        // One statement, one now(): events of the same change are in type order.
        ...then,
        { type: "request.review_resolved", detail: { reviewCaseId: review.caseId, resolution } },
      ]);
    });
  }

  test("a cancel: request.cancelled, and a second cancel writes nothing", async ({ db }) => {
    const [request] = await createRequestsOf(db.pool, singleStep({ kind: "outbox-cancel", run: async () => done() }), [{}]);
    expect(await cancelWorkflow(db.pool, request!.workflowId, "changed my mind")).toBe(true);
    expect(await cancelWorkflow(db.pool, request!.workflowId, "again")).toBe(false);
    expect(await events(db.pool, request!.workflowId)).toEqual([{ type: "request.cancelled", detail: null }]);
  });
});

test("a change rolled back leaves no event", async ({ db }) => {
  const [request] = await createRequestsOf(db.pool, singleStep({ kind: "outbox-rollback", run: async () => done() }), [{}]);
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await run(client, workflowSql.cancelWorkflow, [request!.workflowId, "rolled back", null]);
    expect(await events(client as unknown as Pool, request!.workflowId)).toHaveLength(1);
    await client.query("ROLLBACK");
  } finally {
    client.release();
  }
  expect(await events(db.pool, request!.workflowId)).toEqual([]);
  expect((await db.pool.query("SELECT status FROM workflow WHERE id = $1", [request!.workflowId])).rows[0].status).toBe("active");
});
