/**
 * A bulk action acts on exactly the requests its preview counted, or on none; it runs to the end
 * across a runner that stops, ends each request once, and says which it skipped and why.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "@/lib/engine/lease";
import { reportFailure } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { registerTestContracts, servedFor, testKindOf, truncateEngineTables } from "@/lib/engine/test-support";
import { createWorkflows } from "@/lib/engine/workflow";
import { BulkPreviewStaleError, previewBulk, readBulkProgress, resumeBulkAction, startBulk, type BulkFilter } from "./bulk";

const one = (requester: string, kind = testKindOf("idempotent")) => ({
  kind,
  input: {},
  requester,
  steps: [{ name: "only", adapter: "idempotent", operation: "noop", stepClass: "pure", attemptBudget: 1 }],
});

async function failOne(pool: Pool, reason: string): Promise<void> {
  const session = await registerSession(pool, "direct");
  const [claimed] = await claimSteps(pool, session, servedFor("idempotent"), 1);
  await reportFailure(pool, { stepId: claimed!.stepId, fencingTerm: claimed!.fencingTerm, sessionId: session }, reason);
}

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE bulk_action CASCADE");
  await registerTestContracts(db.pool);
});

test("a bulk cancel of a filtered set cancels exactly the previewed count, audited per request, and skips what ended meanwhile", async ({ db }) => {
  await createWorkflows(db.pool, [...Array.from({ length: 5 }, () => one("app:shop")), ...Array.from({ length: 3 }, () => one("app:other"))]);
  const filter: BulkFilter = { app: "app:shop", status: "active" };
  const preview = await previewBulk(db.pool, filter);
  expect(preview).toMatchObject({ count: 5, overLimit: false });
  expect(preview.sample.every((s) => s.requester === "app:shop")).toBe(true);

  const { id } = await startBulk(db.pool, { action: "cancel", filter, expectedCount: 5, reason: "shop closed", actor: "eng@example.test", clientKey: "bulk-key-0001" });
  // One of them is cancelled elsewhere before the runner reaches it.
  const victim = (await readBulkProgress(db.pool, id)).id && (await db.pool.query<{ workflow_id: string }>("SELECT workflow_id FROM bulk_action_item WHERE bulk_id = $1 ORDER BY position DESC LIMIT 1", [id])).rows[0]!.workflow_id;
  await db.pool.query("UPDATE workflow SET status = 'cancelled' WHERE id = $1", [victim]);

  expect(await resumeBulkAction(db.pool, id)).toBe(5);
  const progress = await readBulkProgress(db.pool, id);
  expect(progress).toMatchObject({ state: "finished", total: 5, done: 4, skipped: 1, pending: 0, skippedItems: [{ requestId: victim, why: "already cancelled" }] });
  const { rows } = await db.pool.query<{ requester: string; status: string; n: number }>("SELECT requester, status, count(*)::int AS n FROM workflow GROUP BY 1, 2 ORDER BY 1, 2");
  expect(rows).toEqual([
    { requester: "app:other", status: "active", n: 3 },
    { requester: "app:shop", status: "cancelled", n: 5 },
  ]);
  const audits = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_log WHERE action = 'request.cancelled' AND actor = 'eng@example.test'");
  expect(audits.rows[0]!.n).toBe(4);
  // A finished action has nothing left: resuming it ends nothing more.
  expect(await resumeBulkAction(db.pool, id)).toBe(0);
});

test("a start whose filter now matches another number than previewed starts nothing; the same client key is the same action", async ({ db }) => {
  await createWorkflows(db.pool, Array.from({ length: 3 }, () => one("app:shop")));
  const filter: BulkFilter = { app: "app:shop" };
  expect((await previewBulk(db.pool, filter)).count).toBe(3);
  await createWorkflows(db.pool, [one("app:shop")]);
  const stale = await startBulk(db.pool, { action: "cancel", filter, expectedCount: 3, reason: "shop closed", actor: "eng", clientKey: "bulk-key-0002" }).catch((e: unknown) => e);
  expect(stale).toBeInstanceOf(BulkPreviewStaleError);
  expect((stale as BulkPreviewStaleError).matched).toBe(4);
  expect((await db.pool.query("SELECT 1 FROM bulk_action")).rowCount).toBe(0);

  const first = await startBulk(db.pool, { action: "cancel", filter, expectedCount: 4, reason: "shop closed", actor: "eng", clientKey: "bulk-key-0003" });
  const again = await startBulk(db.pool, { action: "cancel", filter, expectedCount: 4, reason: "shop closed", actor: "eng", clientKey: "bulk-key-0003" });
  expect(again).toEqual({ id: first.id, created: false });
});

test("a runner that stops leaves the rest to the next, which holds the lease alone, and no request is ended twice", async ({ db }) => {
  await createWorkflows(db.pool, Array.from({ length: 30 }, () => one("app:shop")));
  const { id } = await startBulk(db.pool, { action: "cancel", filter: { app: "app:shop" }, expectedCount: 30, reason: "x y z", actor: "eng", clientKey: "bulk-key-0004" });
  // A runner took the lease and ended 7 items, then died: its lease is still live.
  await db.pool.query("UPDATE bulk_action SET runner_until = now() + interval '1 hour' WHERE id = $1", [id]);
  expect(await resumeBulkAction(db.pool, id)).toBe(0);
  await db.pool.query("UPDATE bulk_action SET runner_until = now() - interval '1 ms' WHERE id = $1", [id]);
  const [a, b] = await Promise.all([resumeBulkAction(db.pool, id), resumeBulkAction(db.pool, id)]);
  expect(a + b).toBe(30);
  expect(Math.min(a, b)).toBe(0);
  expect(await readBulkProgress(db.pool, id)).toMatchObject({ state: "finished", done: 30 });
});

test("a bulk rerun by error reason reruns the failed matches and skips the others with why", async ({ db }) => {
  await createWorkflows(db.pool, [one("app:shop"), one("app:shop")]);
  await failOne(db.pool, "destination said 500 (HTTP_500)");
  const filter: BulkFilter = { app: "app:shop", reason: "http_500" };
  expect((await previewBulk(db.pool, filter)).count).toBe(1);
  expect((await previewBulk(db.pool, { reason: "50%" })).count).toBe(0);
  const { id } = await startBulk(db.pool, { action: "rerun", filter, expectedCount: 1, reason: "destination fixed", actor: "eng", clientKey: "bulk-key-0005" });
  await resumeBulkAction(db.pool, id);
  expect(await readBulkProgress(db.pool, id)).toMatchObject({ done: 1, skipped: 0 });
  const { rows } = await db.pool.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM workflow GROUP BY 1");
  expect(rows).toEqual([{ status: "active", n: 2 }]);

  const all = await startBulk(db.pool, { action: "rerun", filter: { app: "app:shop" }, expectedCount: 2, reason: "again", actor: "eng", clientKey: "bulk-key-0006" });
  await resumeBulkAction(db.pool, all.id);
  const progress = await readBulkProgress(db.pool, all.id);
  expect(progress).toMatchObject({ done: 0, skipped: 2 });
  expect(progress.skippedItems.map((s) => s.why)).toEqual([expect.stringContaining("it is active"), expect.stringContaining("it is active")]);
});
