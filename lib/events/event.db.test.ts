/**
 * Invariant 10: an accepted event is never lost and is consumed by at most one wait; a repeated
 * send is one event. Also: an event that arrives before its wait begins is kept and consumed when
 * the wait starts; a timeout is an explicit outcome (the next steps read it, or the request
 * fails); sends racing a timeout end in one outcome; a one-time URL works once; cancelling a
 * request ends its waits; bad input is refused, naming the field, and writes nothing.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { InvalidInputError } from "@/lib/engine/errors";
import { run } from "@/lib/engine/db";
import * as workflowSql from "@/lib/engine/sql/workflow";
import { settleDue } from "@/lib/engine/waits";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { dueWork } from "@/lib/waits/rooms";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { EventKeyReusedError, UnknownEventError, WaitUrlGoneError } from "./errors";
import { sendEvent, sendThroughWaitUrl } from "./send";

const milestone = { upcoming: "Confirmation", current: "Waiting for the warehouse to confirm", done: "Confirmed" };

/** order → wait for warehouse.confirmed (key: the order id) → ship, which reads the event. */
const confirmThenShip = (kind: string, options: { timeoutMs?: number; onTimeout?: "fail" | "continue"; url?: boolean } = {}, shipped: unknown[] = []) =>
  defineWorkflow({ kind, version: 1, input: z.object({ orderId: z.string() }) })
    .step("order", { milestone, run: async (ctx) => done({ orderId: ctx.input.orderId }) })
    .event("confirmed", {
      dependsOn: ["order"],
      milestone,
      name: "warehouse.confirmed",
      key: (ctx) => ctx.results.order.orderId,
      payload: z.object({ parcels: z.number().int().min(1) }),
      timeoutMs: options.timeoutMs,
      onTimeout: options.onTimeout,
      url: options.url,
    })
    .step("ship", {
      dependsOn: ["confirmed"],
      milestone,
      run: async (ctx) => {
        shipped.push(ctx.results.confirmed);
        return done(ctx.results.confirmed.received ? { parcels: ctx.results.confirmed.payload.parcels } : { parcels: 0 });
      },
    });

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null && found !== undefined) return found;
    if (performance.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const statusOf = async (pool: Pool, requestId: string) =>
  (await pool.query<{ status: string }>(`SELECT status FROM workflow WHERE id = $1`, [requestId])).rows[0]!.status;
const waitOf = async (pool: Pool, stepId: string) =>
  (await pool.query<{ state: string; url_token: string | null; event_id: string | null; settled_at: Date | null }>(`SELECT state, url_token, event_id, settled_at FROM event_wait WHERE step_id = $1`, [stepId])).rows[0];
const ended = (pool: Pool, requestId: string, status = "completed") =>
  until(`request ${requestId} ${status}`, async () => ((await statusOf(pool, requestId)) === status ? true : null));

const send = (pool: Pool, key: string, payload: unknown, idempotencyKey: string | null = null, name = "warehouse.confirmed") =>
  sendEvent(pool, { name, key, payload, sender: "app:shop", idempotencyKey });

test("an event sent while the step waits settles it: the payload is the step's result, the event its receipt's reference", async ({ db }) => {
  const shipped: unknown[] = [];
  const workflow = confirmThenShip("event-while-waiting", {}, shipped);
  const [request] = await createRequestsOf(db.pool, workflow, [{ orderId: "o-1" }]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const confirmedId = request!.stepIds.get("confirmed")!;
    await until("the wait to be armed", () => waitOf(db.pool, confirmedId));
    const { rows: held } = await db.pool.query(`SELECT count(*)::int AS n FROM attempt WHERE step_id = $1 AND ended_at IS NULL`, [confirmedId]);
    expect(held[0].n).toBe(0);
    const sent = await send(db.pool, "o-1", { parcels: 2 }, "confirm-o-1");
    expect(sent).toMatchObject({ duplicate: false, consumedBy: { requestId: request!.workflowId, step: "confirmed" } });
    await ended(db.pool, request!.workflowId);
    expect(shipped).toEqual([{ received: true, payload: { parcels: 2 }, eventId: sent.id, receivedAt: sent.receivedAt }]);
    const { rows } = await db.pool.query(`SELECT verification_method, external_reference FROM receipt WHERE step_id = $1`, [confirmedId]);
    expect(rows).toEqual([{ verification_method: "event_received", external_reference: sent.id }]);
  } finally {
    await worker.stop();
  }
});

test("an event that arrives before its wait begins is kept, and consumed when the wait starts", async ({ db }) => {
  const shipped: unknown[] = [];
  const workflow = confirmThenShip("event-early", {}, shipped);
  // The worker registers the event's name; the request is created only after the event is in.
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const early = await send(db.pool, "o-2", { parcels: 1 });
    expect(early.consumedBy).toBeNull();
    expect(Date.parse(early.keepUntil) - Date.parse(early.receivedAt)).toBe(7 * 24 * 3_600_000);
    const [request] = await createRequestsOf(db.pool, workflow, [{ orderId: "o-2" }]);
    await ended(db.pool, request!.workflowId);
    expect(shipped).toEqual([expect.objectContaining({ received: true, eventId: early.id, payload: { parcels: 1 } })]);
    const { rows } = await db.pool.query(`SELECT consumed_by_step_id FROM event WHERE id = $1`, [early.id]);
    expect(rows[0].consumed_by_step_id).toBe(request!.stepIds.get("confirmed"));
  } finally {
    await worker.stop();
  }
});

test("a repeated send with the same idempotency key is one event; the same key for another event is refused", async ({ db }) => {
  const workflow = confirmThenShip("event-repeat");
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const first = await send(db.pool, "o-3", { parcels: 1 }, "k-1");
    const again = await send(db.pool, "o-3", { parcels: 1 }, "k-1");
    expect(again).toEqual({ ...first, duplicate: true });
    await expect(send(db.pool, "o-3", { parcels: 9 }, "k-1")).rejects.toBeInstanceOf(EventKeyReusedError);
    await expect(send(db.pool, "o-4", { parcels: 1 }, "k-1")).rejects.toBeInstanceOf(EventKeyReusedError);
    // Keys are per sender: another app may use the same key for its own event.
    const other = await sendEvent(db.pool, { name: "warehouse.confirmed", key: "o-3", payload: { parcels: 1 }, sender: "app:other", idempotencyKey: "k-1" });
    expect(other.id).not.toBe(first.id);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM event WHERE correlation_key IN ('o-3', 'o-4')`);
    expect(rows[0].n).toBe(2);
  } finally {
    await worker.stop();
  }
});

test("each event is consumed by at most one wait, also when sends and waits race", async ({ db }) => {
  const workflow = confirmThenShip("event-race");
  const worker = testWorker(db.pool, [workflow], { concurrency: 20 });
  await worker.start();
  try {
    // Twenty requests wait for the same order's confirmation; twenty events race their arming.
    const requests = await createRequestsOf(db.pool, workflow, Array.from({ length: 20 }, () => ({ orderId: "shared" })));
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => send(db.pool, "shared", { parcels: i + 1 }, `race-${i}`)));
    await Promise.all(requests.map((request) => ended(db.pool, request.workflowId)));
    const { rows } = await db.pool.query<{ event_id: string }>(
      `SELECT ew.event_id FROM event_wait ew JOIN workflow w ON w.id = ew.workflow_id WHERE w.kind = 'event-race'`,
    );
    expect(rows).toHaveLength(20);
    // Every wait got a different event, and every event went to exactly one wait.
    expect(new Set(rows.map((row) => row.event_id)).size).toBe(20);
    expect(new Set(rows.map((row) => row.event_id))).toEqual(new Set(sent.map((event) => event.id)));
    const { rows: consumed } = await db.pool.query(`SELECT count(*)::int AS n FROM event WHERE correlation_key = 'shared' AND consumed_at IS NOT NULL`);
    expect(consumed[0].n).toBe(20);
  } finally {
    await worker.stop();
  }
});

test("a timeout is an explicit outcome: with continue the next step reads it, with fail the request fails", async ({ db }) => {
  const shipped: unknown[] = [];
  const continuing = confirmThenShip("event-timeout-continue", { timeoutMs: 200, onTimeout: "continue" }, shipped);
  const failing = confirmThenShip("event-timeout-fail", { timeoutMs: 200 });
  const worker = testWorker(db.pool, [continuing, failing]);
  await worker.start();
  try {
    const [c] = await createRequestsOf(db.pool, continuing, [{ orderId: "late-1" }]);
    const [f] = await createRequestsOf(db.pool, failing, [{ orderId: "late-2" }]);
    await ended(db.pool, c!.workflowId);
    expect(shipped).toEqual([{ received: false, timedOutAt: expect.any(String) }]);
    const cWait = (await waitOf(db.pool, c!.stepIds.get("confirmed")!))!;
    expect(cWait.state).toBe("timed_out");
    await ended(db.pool, f!.workflowId, "failed");
    const { rows } = await db.pool.query(`SELECT status_reason FROM workflow WHERE id = $1`, [f!.workflowId]);
    expect(rows[0].status_reason).toBe("no warehouse.confirmed event for late-2 arrived before the wait timed out");
    // An event that comes after the timeout is kept, not lost, and settles nothing.
    const late = await send(db.pool, "late-1", { parcels: 1 });
    expect(late.consumedBy).toBeNull();
  } finally {
    await worker.stop();
  }
});

test("sends racing a wait's timeout end in exactly one outcome, recorded with the database time", async ({ db }) => {
  const workflow = confirmThenShip("event-timeout-race", { timeoutMs: 3_600_000, onTimeout: "continue" });
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  const requests = await createRequestsOf(db.pool, workflow, Array.from({ length: 10 }, (_, i) => ({ orderId: `edge-${i}` })));
  const waits = requests.map((request) => request.stepIds.get("confirmed")!);
  try {
    await until("every wait armed", async () => ((await Promise.all(waits.map((step) => waitOf(db.pool, step)))).every(Boolean) ? true : null));
  } finally {
    await worker.stop();
  }
  // Every wait times out now; two sends for each race the keepers.
  await db.pool.query(`UPDATE event_wait SET timeout_at = now() WHERE step_id = ANY($1::uuid[])`, [waits]);
  await Promise.all([
    ...requests.flatMap((_, i) => [send(db.pool, `edge-${i}`, { parcels: 1 }), send(db.pool, `edge-${i}`, { parcels: 2 })]),
    settleDue(db.pool, dueWork, 3),
    settleDue(db.pool, dueWork, 4),
  ]);
  while ((await settleDue(db.pool, dueWork, 100)).settled > 0);
  for (const step of waits) {
    const wait = (await waitOf(db.pool, step))!;
    expect(["received", "timed_out"]).toContain(wait.state);
    expect(wait.settled_at).toBeInstanceOf(Date);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS receipts FROM receipt WHERE step_id = $1`, [step]);
    expect(rows[0].receipts).toBe(1);
  }
  // Both events of every order are kept: one consumed where its wait received it, none lost.
  const { rows } = await db.pool.query<{ n: number; consumed: number }>(
    `SELECT count(*)::int AS n, count(consumed_at)::int AS consumed FROM event WHERE correlation_key LIKE 'edge-%'`,
  );
  const received = (await Promise.all(waits.map((step) => waitOf(db.pool, step)))).filter((wait) => wait!.state === "received").length;
  expect(rows[0]).toEqual({ n: 20, consumed: received });
});

test("a one-time URL settles its wait once; used, or after its wait ended, it is gone", async ({ db }) => {
  const workflow = confirmThenShip("event-url", { url: true, timeoutMs: 3_600_000 });
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const [first, second] = await createRequestsOf(db.pool, workflow, [{ orderId: "u-1" }, { orderId: "u-2" }]);
    const token = await until("the URL", async () => (await waitOf(db.pool, first!.stepIds.get("confirmed")!))?.url_token);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await expect(sendThroughWaitUrl(db.pool, token, { parcels: 0 }, null)).rejects.toBeInstanceOf(InvalidInputError);
    const sent = await sendThroughWaitUrl(db.pool, token, { parcels: 3 }, "third-party-1");
    expect(sent.consumedBy).toEqual({ requestId: first!.workflowId, step: "confirmed" });
    // The same send repeated is the same event; anything else through a used URL is refused.
    expect(await sendThroughWaitUrl(db.pool, token, { parcels: 3 }, "third-party-1")).toEqual({ ...sent, duplicate: true });
    await expect(sendThroughWaitUrl(db.pool, token, { parcels: 4 }, null)).rejects.toBeInstanceOf(WaitUrlGoneError);
    await ended(db.pool, first!.workflowId);
    // A URL dies with its wait: the second request is cancelled, and its URL refuses.
    const secondToken = await until("the second URL", async () => (await waitOf(db.pool, second!.stepIds.get("confirmed")!))?.url_token);
    await cancelWorkflow(db.pool, second!.workflowId, "customer cancelled");
    await expect(sendThroughWaitUrl(db.pool, secondToken, { parcels: 1 }, null)).rejects.toBeInstanceOf(WaitUrlGoneError);
    await expect(sendThroughWaitUrl(db.pool, "no-such-token", { parcels: 1 }, null)).rejects.toBeInstanceOf(WaitUrlGoneError);
  } finally {
    await worker.stop();
  }
});

test("cancelling a request ends its waits, and an event sent afterwards is kept for another wait", async ({ db }) => {
  const workflow = confirmThenShip("event-cancel");
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const [request] = await createRequestsOf(db.pool, workflow, [{ orderId: "c-1" }]);
    const confirmedId = request!.stepIds.get("confirmed")!;
    await until("the wait to be armed", () => waitOf(db.pool, confirmedId));
    await cancelWorkflow(db.pool, request!.workflowId, "customer cancelled");
    expect((await waitOf(db.pool, confirmedId))!.state).toBe("cancelled");
    const after = await send(db.pool, "c-1", { parcels: 1 });
    expect(after.consumedBy).toBeNull();
    expect(await statusOf(db.pool, request!.workflowId)).toBe("cancelled");
  } finally {
    await worker.stop();
  }
});

test("a send that finds the oldest wait's request being cancelled waits for the cancel, then settles the next wait, never the cancelled one", async ({ db }) => {
  const workflow = confirmThenShip("event-cancel-race");
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  const requests = await createRequestsOf(db.pool, workflow, [{ orderId: "cr-1" }, { orderId: "cr-1" }]);
  try {
    await until("both waits armed", async () => ((await Promise.all(requests.map((r) => waitOf(db.pool, r.stepIds.get("confirmed")!)))).every(Boolean) ? true : null));
  } finally {
    await worker.stop();
  }
  const { rows: byAge } = await db.pool.query<{ workflow_id: string; step_id: string }>(
    `SELECT workflow_id, step_id FROM event_wait WHERE name = 'warehouse.confirmed' AND correlation_key = 'cr-1' ORDER BY armed_at, step_id`,
  );
  const [oldest, next] = byAge;
  // The oldest wait's request is cancelled in a transaction still open when the send arrives.
  const canceller = await db.pool.connect();
  let committed = false;
  try {
    await canceller.query("BEGIN");
    expect(await run(canceller, workflowSql.cancelWorkflow, [oldest!.workflow_id, "customer cancelled", null])).toHaveLength(1);
    await run(canceller, workflowSql.cancelIdleSteps, [oldest!.workflow_id, "customer cancelled"]);
    const sending = send(db.pool, "cr-1", { parcels: 1 });
    // The send's statement has read the oldest wait as waiting and queues for its request's row.
    await until("the send to wait for the cancel's transaction", async () => (await db.pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted`)).rows[0]);
    await canceller.query("COMMIT");
    committed = true;
    const sent = await sending;
    expect(sent.consumedBy).toEqual({ requestId: next!.workflow_id, step: "confirmed" });
    expect(await waitOf(db.pool, oldest!.step_id)).toMatchObject({ state: "cancelled", event_id: null });
    expect(await waitOf(db.pool, next!.step_id)).toMatchObject({ state: "received", event_id: sent.id });
    const { rows } = await db.pool.query(`SELECT step_id FROM receipt WHERE step_id = ANY($1::uuid[])`, [[oldest!.step_id, next!.step_id]]);
    expect(rows).toEqual([{ step_id: next!.step_id }]);
  } finally {
    if (!committed) await canceller.query("ROLLBACK");
    canceller.release();
  }
});

test("an event that settles a wait wakes the workers once its transaction has committed", async ({ db }) => {
  const workflow = confirmThenShip("event-wakes");
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  const [request] = await createRequestsOf(db.pool, workflow, [{ orderId: "w-1" }]);
  try {
    await until("the wait to be armed", () => waitOf(db.pool, request!.stepIds.get("confirmed")!));
  } finally {
    await worker.stop();
  }
  const listener = await db.pool.connect();
  try {
    let woken = false;
    listener.once("notification", () => (woken = true));
    await listener.query("LISTEN fenceline_step_ready");
    const sent = await send(db.pool, "w-1", { parcels: 1 });
    expect(sent.consumedBy).toEqual({ requestId: request!.workflowId, step: "confirmed" });
    await until("the workers' wake-up", async () => (woken ? true : null));
    // The step after the wait is ready: what the notification announced was committed.
    const { rows } = await db.pool.query(`SELECT state FROM step WHERE workflow_id = $1 AND name = 'ship'`, [request!.workflowId]);
    expect(rows).toEqual([{ state: "ready" }]);
  } finally {
    await listener.query("UNLISTEN *");
    listener.release();
  }
});

test("bad sends are refused naming what is wrong, and write nothing", async ({ db }) => {
  const workflow = confirmThenShip("event-bad");
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const before = (await db.pool.query(`SELECT count(*)::int AS n FROM event`)).rows[0].n;
    await expect(send(db.pool, "o-9", { parcels: 1 }, null, "warehouse.nope")).rejects.toBeInstanceOf(UnknownEventError);
    const invalid = await send(db.pool, "o-9", { parcels: "two" }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(InvalidInputError);
    expect((invalid as InvalidInputError).issues).toEqual([{ path: "payload.parcels", message: "must be integer" }]);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM event`)).rows[0].n).toBe(before);
  } finally {
    await worker.stop();
  }
});
