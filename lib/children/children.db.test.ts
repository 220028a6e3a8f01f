/**
 * Invariant 11: a parent step starts each child at most once, whatever its retries and
 * recoveries. Also: a fan-out past its bound is refused with nothing written; a child kind no
 * worker registered is refused naming the field, with nothing written; a failed child fails the
 * step or is collected, as the step declares; cancelling the parent cancels its unfinished
 * children; children inherit the parent's app, priority and concurrency key unless told
 * otherwise; the children's results reach the steps after the parent step, typed.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { DefinitionError } from "@/lib/definitions/errors";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { inTransaction } from "@/lib/engine/db";
import { AuthorityLostError, InvalidWaitError } from "@/lib/engine/errors";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { parkStep } from "@/lib/engine/waits";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { registeredWorkflow } from "@/lib/definitions/registration";
import { waitRooms } from "@/lib/waits/rooms";
import { createWorkflows } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import type { CheckpointHooks } from "@/lib/worker/hooks";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { childrenOfRequest, parentOfRequest, stepTree } from "./read";
import { childrenRoom } from "./room";
import { until } from "./test-support";

const milestone = { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" };
const plain = { upcoming: "Step", current: "Working on it", done: "Done" };

/**
 * A parcel: packs (fails when told to), or waits an hour first when `slow`. `gate`, when
 * given, holds a failing parcel's pack until the test opens it, so siblings' order is the test's.
 */
const parcelOf = (kind: string, gate?: Promise<void>) =>
  defineWorkflow({ kind, version: 1, input: z.object({ parcel: z.string(), fail: z.boolean().default(false), slow: z.boolean().default(false) }) })
    .timer("hold", { milestone: plain, afterMs: (ctx) => (ctx.input.slow ? 3_600_000 : 0) })
    .step("pack", {
      dependsOn: ["hold"],
      milestone: plain,
      attemptBudget: 1,
      run: async (ctx) => {
        if (ctx.input.fail) {
          await gate;
          throw new Error(`parcel ${ctx.input.parcel} is damaged`);
        }
        return done({ packed: ctx.input.parcel });
      },
    });

const orderOf = (kind: string, parcel: ReturnType<typeof parcelOf>, options: { onChildFailure?: "fail" | "collect"; maxChildren?: number; seen?: unknown[]; attemptBudget?: number } = {}) =>
  defineWorkflow({ kind, version: 1, input: z.object({ parcels: z.array(z.string()), failing: z.array(z.string()).default([]), slow: z.array(z.string()).default([]) }) })
    .children("ship", {
      milestone,
      attemptBudget: options.attemptBudget ?? 2,
      workflow: parcel,
      each: (ctx) => ctx.input.parcels,
      input: (ctx, parcel) => ({ parcel, fail: ctx.input.failing.includes(parcel), slow: ctx.input.slow.includes(parcel) }),
      onChildFailure: options.onChildFailure ?? "fail",
      maxChildren: options.maxChildren ?? 10,
    })
    .step("after", {
      dependsOn: ["ship"],
      milestone: plain,
      run: async (ctx) => {
        // Typed: a completed child's results are the parcel workflow's results.
        const packed = ctx.results.ship.children.map((child) => (child.status === "completed" ? child.results.pack.packed : null));
        options.seen?.push(ctx.results.ship);
        return done({ packed });
      },
    });

const statusOf = async (pool: Pool, workflowId: string): Promise<string> => (await pool.query(`SELECT status::text FROM workflow WHERE id = $1`, [workflowId])).rows[0].status;
const endedAs = (pool: Pool, workflowId: string, status: string) => until(`request ${workflowId} to be ${status}`, async () => (await statusOf(pool, workflowId)) === status);

/** Children per (parent step, index), and requests of `kind` in all: a duplicate shows in either. */
async function childCounts(pool: Pool, parentStepId: string, kind: string): Promise<{ links: number; indexes: number; requests: number }> {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM child_request WHERE parent_step_id = $1) AS links,
            (SELECT count(DISTINCT index)::int FROM child_request WHERE parent_step_id = $1) AS indexes,
            (SELECT count(*)::int FROM workflow WHERE kind = $2) AS requests`,
    [parentStepId, kind],
  );
  return rows[0];
}

test("a step fans out one child per element, waits holding no lease, and completes with their typed results once all have ended", async ({ db }) => {
  const seen: unknown[] = [];
  const parcel = parcelOf("fan-parcel");
  const order = orderOf("fan-order", parcel, { seen });
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b", "c"] }]);
  const shipId = request!.stepIds.get("ship")!;
  await testWorker(db.pool, [order, parcel], { concurrency: 4 }).start();
  await endedAs(db.pool, request!.workflowId, "completed");

  expect(await childCounts(db.pool, shipId, "fan-parcel")).toEqual({ links: 3, indexes: 3, requests: 3 });
  const { rows: receipts } = await db.pool.query(`SELECT verification_method::text, observed_result FROM receipt WHERE step_id = $1`, [shipId]);
  expect(receipts).toHaveLength(1);
  expect(receipts[0].verification_method).toBe("children_ended");
  expect(receipts[0].observed_result).toMatchObject({ completed: 3, failed: 0 });
  expect(seen).toHaveLength(1);
  const { rows: after } = await db.pool.query(`SELECT observed_result FROM receipt WHERE step_id = $1`, [request!.stepIds.get("after")]);
  expect(after[0].observed_result).toEqual({ packed: ["a", "b", "c"] });
  // The parent's wait: armed by one attempt that ended `waiting`, settled once.
  const { rows: attempts } = await db.pool.query(`SELECT outcome::text FROM attempt WHERE step_id = $1`, [shipId]);
  expect(attempts).toEqual([{ outcome: "waiting" }]);
  const { rows: wait } = await db.pool.query(`SELECT state::text, children_total, children_ended, children_failed FROM child_wait WHERE step_id = $1`, [shipId]);
  expect(wait[0]).toEqual({ state: "ended", children_total: 3, children_ended: 3, children_failed: 0 });

  // The read functions the request page calls.
  const children = await childrenOfRequest(db.pool, request!.workflowId);
  expect(children.map((child) => [child.step, child.index, child.kind, child.status])).toEqual([
    ["ship", 0, "fan-parcel", "completed"],
    ["ship", 1, "fan-parcel", "completed"],
    ["ship", 2, "fan-parcel", "completed"],
  ]);
  expect(await parentOfRequest(db.pool, children[1]!.requestId)).toMatchObject({ requestId: request!.workflowId, step: "ship", stepId: shipId, index: 1, kind: "fan-order" });
  expect(await parentOfRequest(db.pool, request!.workflowId)).toBeNull();
  // The step page's tree: from the parent step down, and from a child's step up.
  expect(await stepTree(db.pool, shipId)).toMatchObject({ requestId: request!.workflowId, parent: null, wait: { state: "ended", total: 3, ended: 3 }, children: children });
  const { rows: childStep } = await db.pool.query(`SELECT id FROM step WHERE workflow_id = $1 AND name = 'pack'`, [children[2]!.requestId]);
  expect(await stepTree(db.pool, childStep[0].id)).toMatchObject({ parent: { stepId: shipId, index: 2, siblings: 3, waitState: "ended" }, wait: null, children: [] });
});

test("a park applied whose answer was lost, then retried, starts no second child; arming the same step twice is refused by the unique constraint", async ({ db }) => {
  const parcel = parcelOf("lost-parcel");
  const order = orderOf("lost-order", parcel);
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b"] }]);
  const shipId = request!.stepIds.get("ship")!;
  // The worker's park commits, then its answer is lost: the worker sees an error where the reply should be.
  let lost = 0;
  const hooks: CheckpointHooks = {
    reached: async (name, step) => {
      if (name === "parked" && step.stepId === shipId && lost++ === 0) throw new Error("connection reset: the park's answer was lost");
    },
  };
  const worker = testWorker(db.pool, [order, parcel], { hooks });
  await worker.start();
  await endedAs(db.pool, request!.workflowId, "completed");
  expect(lost).toBe(1);
  expect(await childCounts(db.pool, shipId, "lost-parcel")).toEqual({ links: 2, indexes: 2, requests: 2 });
  // The lost answer's worker reported a failure for a lease it no longer held: refused, recorded.
  const { rows: rejections } = await db.pool.query(`SELECT operation FROM fencing_rejection WHERE step_id = $1`, [shipId]);
  expect(rejections.map((row) => row.operation)).toEqual(["report_failure"]);

  // The retried park itself: the same lease parks again.
  const { rows: lease } = await db.pool.query(`SELECT owner_session_id AS session_id, fencing_term FROM attempt WHERE step_id = $1`, [shipId]);
  const handle = { stepId: shipId, sessionId: lease[0].session_id, fencingTerm: BigInt(lease[0].fencing_term) } as Parameters<typeof parkStep>[2];
  const retry = parkStep(db.pool, waitRooms, handle, { room: "children", request: { workflow: { kind: "lost-parcel", version: 1 }, onChildFailure: "fail", children: [{ input: { parcel: "a" } }] } }, "retry");
  await expect(retry).rejects.toBeInstanceOf(AuthorityLostError);
  expect(await childCounts(db.pool, shipId, "lost-parcel")).toEqual({ links: 2, indexes: 2, requests: 2 });

  // Below the authority guard, the room's own guard: a second arming of the same step fails whole.
  const second = inTransaction(db.pool, (client) =>
    childrenRoom.arm(client, { stepId: shipId, workflowId: request!.workflowId, attemptId: "00000000-0000-0000-0000-000000000000", readyAt: new Date(), dbNow: new Date() }, {
      workflow: { kind: "lost-parcel", version: 1 },
      onChildFailure: "fail",
      children: [{ input: { parcel: "a" } }, { input: { parcel: "b" } }],
    }),
  );
  await expect(second).rejects.toThrow(/already started its child 0|duplicate key/);
  expect(await childCounts(db.pool, shipId, "lost-parcel")).toEqual({ links: 2, indexes: 2, requests: 2 });
});

test("a worker that loses its lease while working out the children is refused, and the one that recovered the step starts each child once", async ({ db }) => {
  const parcel = parcelOf("recover-parcel");
  const order = orderOf("recover-order", parcel);
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b", "c", "d"] }]);
  const shipId = request!.stepIds.get("ship")!;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let paused!: () => void;
  const pausedAt = new Promise<void>((resolve) => (paused = resolve));
  // Worker A holds the parent step at its claim, renewing nothing useful: it is paused past its lease.
  const slow = testWorker(db.pool, [order, parcel], {
    recoveryIntervalMs: 60_000,
    hooks: {
      reached: async (name, step) => {
        if (name === "claimed" && step.stepId === shipId && step.fencingTerm === 1n) {
          paused();
          await released;
        }
      },
    },
  });
  await slow.start();
  await pausedAt;
  await setLeaseExpiry(db.pool, shipId, -1);
  // Stop A renewing: its lease expired on the database clock, recovery decides from evidence.
  expect((await runRecoveryScan(db.pool, { decidedBy: "test", batchSize: 10 })).length).toBeGreaterThanOrEqual(1);
  const rescuer = testWorker(db.pool, [order, parcel], { concurrency: 4 });
  await rescuer.start();
  await until("the rescuer's children", async () => (await childCounts(db.pool, shipId, "recover-parcel")).links === 4).catch(async (error) => {
    console.log(JSON.stringify((await db.pool.query(`SELECT s.state, s.state_reason, s.next_eligible_at, s.fencing_term, (SELECT json_agg(json_build_object('o', a.outcome, 'r', a.outcome_reason, 't', a.fencing_term)) FROM attempt a WHERE a.step_id = s.id) AS attempts, (SELECT json_agg(d.category) FROM recovery_decision d WHERE d.step_id = s.id) AS decisions FROM step s WHERE s.id = $1`, [shipId])).rows));
    throw error;
  });
  // A wakes up and tries to park its own list of children: refused by the authority guard, nothing written.
  release();
  await endedAs(db.pool, request!.workflowId, "completed");
  // Refused at the park, or (when its renewal already told it) at the failure it reports instead.
  await until("A's refusal", async () => (await db.pool.query(`SELECT 1 FROM fencing_rejection WHERE step_id = $1 AND presented_term = 1 AND operation IN ('park', 'report_failure')`, [shipId])).rows[0]);
  expect(await childCounts(db.pool, shipId, "recover-parcel")).toEqual({ links: 4, indexes: 4, requests: 4 });
});

test("a fan-out past the step's bound is refused naming the bound, with nothing written; so is one past the room's bound sent by hand", async ({ db }) => {
  const parcel = parcelOf("bound-parcel");
  const order = orderOf("bound-order", parcel, { maxChildren: 3, attemptBudget: 1 });
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b", "c", "d"] }]);
  const shipId = request!.stepIds.get("ship")!;
  await testWorker(db.pool, [order, parcel]).start();
  await endedAs(db.pool, request!.workflowId, "failed");
  const { rows } = await db.pool.query(`SELECT s.state::text, a.outcome_reason FROM step s JOIN attempt a ON a.step_id = s.id WHERE s.id = $1`, [shipId]);
  expect(rows[0].state).toBe("failed");
  expect(rows[0].outcome_reason).toMatch(/returned 4 elements, past this step's fan-out bound of 3 \(children\.maxChildren/);
  expect(await childCounts(db.pool, shipId, "bound-parcel")).toEqual({ links: 0, indexes: 0, requests: 0 });
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM child_wait WHERE step_id = $1`, [shipId])).rows[0].n).toBe(0);

  // A worker that skips its own check (an HTTP worker of another build) meets the room's: 1,001 children.
  expect(() => defineWorkflow({ kind: "too-wide", version: 1, input: z.object({}) }).children("many", { milestone, workflow: parcel, input: () => ({ parcel: "x" }), maxChildren: 1_001 })).toThrow(
    DefinitionError,
  );
  const parsed = childrenRoom.request.safeParse({ workflow: { kind: "bound-parcel", version: 1 }, onChildFailure: "fail", children: Array.from({ length: 1_001 }, () => ({ input: { parcel: "x" } })) });
  expect(parsed.success).toBe(false);
  expect(JSON.stringify(parsed.error?.issues)).toMatch(/at most 1000 children/);
});

test("a child kind no worker registered is refused naming children.workflow, and nothing is written", async ({ db }) => {
  const parcel = parcelOf("unserved-parcel");
  const order = orderOf("unserved-order", parcel, { attemptBudget: 1 });
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a"] }]);
  const shipId = request!.stepIds.get("ship")!;
  // This worker serves the order only: no worker ever registered the parcel.
  await testWorker(db.pool, [order]).start();
  await endedAs(db.pool, request!.workflowId, "failed");
  const { rows } = await db.pool.query(`SELECT outcome_reason FROM attempt WHERE step_id = $1`, [shipId]);
  expect(rows[0].outcome_reason).toMatch(/children\.workflow: no worker has registered unserved-parcel@1/);
  expect(await childCounts(db.pool, shipId, "unserved-parcel")).toEqual({ links: 0, indexes: 0, requests: 0 });
  await expect(
    inTransaction(db.pool, (client) =>
      childrenRoom.arm(client, { stepId: shipId, workflowId: request!.workflowId, attemptId: "00000000-0000-0000-0000-000000000000", readyAt: new Date(), dbNow: new Date() }, {
        workflow: { kind: "unserved-parcel", version: 1 },
        onChildFailure: "fail",
        children: [{ input: {} }],
      }),
    ),
  ).rejects.toBeInstanceOf(InvalidWaitError);
});

test("with onChildFailure fail, a failed child fails the step and its request at once, and its unfinished siblings are cancelled", async ({ db }) => {
  let open = () => {};
  const parcel = parcelOf("fail-parcel", new Promise<void>((resolve) => (open = resolve)));
  const order = orderOf("fail-order", parcel, { onChildFailure: "fail" });
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b", "c"], failing: ["b"], slow: ["c"] }]);
  const shipId = request!.stepIds.get("ship")!;
  await testWorker(db.pool, [order, parcel], { concurrency: 4 }).start();
  // Child a completes before b fails: a finished sibling must stay as it ended.
  await until("child a to complete", async () => (await childrenOfRequest(db.pool, request!.workflowId))[0]?.status === "completed");
  open();
  await endedAs(db.pool, request!.workflowId, "failed");
  const { rows } = await db.pool.query(`SELECT state::text, state_reason FROM step WHERE id = $1`, [shipId]);
  expect(rows[0].state).toBe("failed");
  expect(rows[0].state_reason).toMatch(/^child 2 of 3 \(fail-parcel@1, request [0-9a-f-]+\) could not be completed/);
  const children = await childrenOfRequest(db.pool, request!.workflowId);
  expect(children.map((child) => child.status)).toEqual(["completed", "failed", "cancelled"]);
  const { rows: timers } = await db.pool.query(`SELECT t.state::text FROM timer t WHERE t.workflow_id = $1`, [children[2]!.requestId]);
  expect(timers).toEqual([{ state: "cancelled" }]);
  expect((await db.pool.query(`SELECT state::text FROM child_wait WHERE step_id = $1`, [shipId])).rows[0].state).toBe("failed");
});

test("with onChildFailure collect, a failed child is one of the results and the request goes on", async ({ db }) => {
  const seen: unknown[] = [];
  const parcel = parcelOf("collect-parcel");
  const order = orderOf("collect-order", parcel, { onChildFailure: "collect", seen });
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b"], failing: ["a"] }]);
  await testWorker(db.pool, [order, parcel], { concurrency: 4 }).start();
  await endedAs(db.pool, request!.workflowId, "completed");
  expect(seen).toEqual([
    {
      completed: 1,
      failed: 1,
      children: [
        { index: 0, requestId: expect.any(String), status: "failed", reason: expect.stringMatching(/^attempt budget exhausted: .*parcel a is damaged/) },
        { index: 1, requestId: expect.any(String), status: "completed", results: { hold: expect.any(Object), pack: { packed: "b" } } },
      ],
    },
  ]);
});

test("cancelling the parent cancels its unfinished children, their waits with them; a finished child stays as it ended", async ({ db }) => {
  const parcel = parcelOf("cancel-parcel");
  const order = orderOf("cancel-order", parcel);
  const [request] = await createRequestsOf(db.pool, order, [{ parcels: ["a", "b", "c"], slow: ["b", "c"] }]);
  const shipId = request!.stepIds.get("ship")!;
  await testWorker(db.pool, [order, parcel], { concurrency: 4 }).start();
  await until("child a to complete and the others to wait", async () => {
    const children = await childrenOfRequest(db.pool, request!.workflowId);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM timer WHERE state = 'waiting' AND workflow_id = ANY($1::uuid[])`, [children.map((child) => child.requestId)]);
    return children[0]?.status === "completed" && rows[0].n === 2;
  });
  // Its end user sees one line for the children, in the parent step's words.
  expect((await trackingViewByWorkflowId(db.pool, request!.workflowId))!.happening).toBe("Preparing 1 of 3 parcels.");
  expect(await cancelWorkflow(db.pool, request!.workflowId, "customer changed their mind")).toBe(true);
  const children = await childrenOfRequest(db.pool, request!.workflowId);
  expect(children.map((child) => child.status)).toEqual(["completed", "cancelled", "cancelled"]);
  const { rows: timers } = await db.pool.query(`SELECT state::text FROM timer WHERE workflow_id = ANY($1::uuid[]) ORDER BY state::text`, [children.map((child) => child.requestId)]);
  expect(timers.map((row) => row.state)).toEqual(["cancelled", "cancelled", "fired"]);
  const { rows: steps } = await db.pool.query(`SELECT count(*)::int AS n FROM step WHERE workflow_id = ANY($1::uuid[]) AND state NOT IN ('completed', 'cancelled')`, [children.map((child) => child.requestId)]);
  expect(steps[0].n).toBe(0);
  expect((await db.pool.query(`SELECT state::text FROM child_wait WHERE step_id = $1`, [shipId])).rows[0].state).toBe("cancelled");
  const { rows: events } = await db.pool.query(`SELECT count(*)::int AS n FROM outbox_event WHERE type = 'request.cancelled' AND workflow_id = ANY($1::uuid[])`, [children.map((child) => child.requestId)]);
  expect(events[0].n).toBe(2);
});

test("children take their parent's app, priority and concurrency key, unless the step overrides them", async ({ db }) => {
  const parcel = parcelOf("inherit-parcel");
  const inherit = orderOf("inherit-order", parcel);
  const override = defineWorkflow({ kind: "override-order", version: 1, input: z.object({ parcels: z.array(z.string()) }) }).children("ship", {
    milestone,
    workflow: parcel,
    each: (ctx) => ctx.input.parcels,
    input: (_ctx, parcel) => ({ parcel }),
    overrides: (_ctx, _parcel, index) => (index === 0 ? { priority: 2, concurrencyKey: null } : { concurrencyKey: "warehouse-b" }),
  });
  const created = await createWorkflows(db.pool, [
    instantiateWorkflow(registeredWorkflow(inherit as WorkflowDefinition), { parcels: ["a", "b"] }, { requester: "app:shop", idempotencyKey: null, deadlineAt: null, priority: 7, concurrencyKey: "tenant-a" }),
    instantiateWorkflow(registeredWorkflow(override as WorkflowDefinition), { parcels: ["a", "b"] }, { requester: "app:shop", idempotencyKey: null, deadlineAt: null, priority: 7, concurrencyKey: "tenant-a" }),
  ]);
  await testWorker(db.pool, [inherit, override, parcel], { concurrency: 4 }).start();
  for (const request of created) await endedAs(db.pool, request.workflowId, "completed");
  const childrenOf = async (workflowId: string) =>
    (
      await db.pool.query(
        `SELECT w.requester, w.priority, w.concurrency_key, w.idempotency_key FROM child_request c JOIN workflow w ON w.id = c.child_workflow_id
          WHERE c.parent_workflow_id = $1 ORDER BY c.index`,
        [workflowId],
      )
    ).rows;
  const inherited = await childrenOf(created[0]!.workflowId);
  expect(inherited.map(({ idempotency_key: _, ...rest }) => rest)).toEqual([
    { requester: "app:shop", priority: 7, concurrency_key: "tenant-a" },
    { requester: "app:shop", priority: 7, concurrency_key: "tenant-a" },
  ]);
  expect(inherited[1].idempotency_key).toBe(`fenceline.child:${created[0]!.stepIds.get("ship")}:1`);
  expect((await childrenOf(created[1]!.workflowId)).map(({ idempotency_key: _, ...rest }) => rest)).toEqual([
    { requester: "app:shop", priority: 2, concurrency_key: null },
    { requester: "app:shop", priority: 7, concurrency_key: "warehouse-b" },
  ]);
});
