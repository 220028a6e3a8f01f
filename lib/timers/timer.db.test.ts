/**
 * Invariant 9, for timers: a waiting step holds no lease and no permit; a timer fires at most
 * once and never before its time on the database clock. Also: a timer's result reaches the steps
 * after it, a cancelled or failed request's timer ends without firing, several keepers racing
 * over the same due timers fire each exactly once, and a keeper's pass is linear in its timers.
 */
import { expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { settleDue } from "@/lib/engine/waits";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { createPool } from "@/lib/db/pool";
import { dueWork } from "@/lib/waits/rooms";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { settleWaitingSteps } from "@/lib/engine/sql/waits";
import { timerRoom } from "./room";
import { fireDueTimers } from "./sql";

const milestone = { upcoming: "Later", current: "Waiting a moment", done: "Moment passed" };

const napThenRead = (kind: string, afterMs: number, seen: unknown[] = []) =>
  defineWorkflow({ kind, version: 1, input: z.object({ n: z.number() }) })
    .step("first", { milestone, run: async (ctx) => done({ n: ctx.input.n }) })
    .timer("nap", { dependsOn: ["first"], milestone, afterMs })
    .step("after", {
      dependsOn: ["nap", "first"],
      milestone,
      run: async (ctx) => {
        seen.push(ctx.results);
        return done({ firedAt: ctx.results.nap.firedAt, n: ctx.results.first.n });
      },
    });

type TimerRow = { state: string; due_at: Date; armed_at: Date; settled_at: Date | null; ready_at: Date };

async function timerOf(pool: import("pg").Pool, stepId: string): Promise<TimerRow | undefined> {
  const { rows } = await pool.query<TimerRow>(
    `SELECT t.state, t.due_at, t.armed_at, t.settled_at, d.completed_at AS ready_at
       FROM timer t JOIN step_dependency sd ON sd.step_id = t.step_id JOIN step d ON d.id = sd.depends_on_step_id
      WHERE t.step_id = $1`,
    [stepId],
  );
  return rows[0];
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null && found !== undefined) return found;
    if (performance.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("a timer step waits holding no lease and no permit, then fires on the database clock, never early, and its result reaches the next step", async ({ db }) => {
  const seen: unknown[] = [];
  const workflow = napThenRead("timer-nap", 800, seen);
  const [request] = await createRequestsOf(db.pool, workflow, [{ n: 7 }]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const napId = request!.stepIds.get("nap")!;
    const waiting = await until("the timer to be armed", () => timerOf(db.pool, napId));
    expect(waiting.state).toBe("waiting");
    // The duration counts from when the step became ready: the first step's receipt.
    expect(waiting.due_at.getTime() - waiting.ready_at.getTime()).toBe(800);
    const { rows: held } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM attempt WHERE step_id = $1 AND ended_at IS NULL) AS open_leases,
              (SELECT count(*)::int FROM adapter_permit WHERE step_id = $1 AND state <> 'released') AS permits,
              (SELECT state FROM step WHERE id = $1) AS state,
              (SELECT outcome FROM attempt WHERE step_id = $1) AS outcome`,
      [napId],
    );
    expect(held[0]).toEqual({ open_leases: 0, permits: 0, state: "waiting", outcome: "waiting" });

    const { rows } = await until("the request to complete", async () => {
      const result = await db.pool.query(`SELECT status FROM workflow WHERE id = $1 AND status = 'completed'`, [request!.workflowId]);
      return result.rows.length > 0 ? result : null;
    });
    expect(rows).toHaveLength(1);
    const fired = (await timerOf(db.pool, napId))!;
    expect(fired.state).toBe("fired");
    // Never early: it fired at or after its time, on the database clock.
    expect(fired.settled_at!.getTime()).toBeGreaterThanOrEqual(fired.due_at.getTime());
    const { rows: receipts } = await db.pool.query(
      `SELECT r.verification_method, r.observed_result, r.attempt_id = a.id AS by_arming_attempt
         FROM receipt r JOIN attempt a ON a.step_id = r.step_id WHERE r.step_id = $1`,
      [napId],
    );
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({ verification_method: "database_clock", by_arming_attempt: true });
    expect(Date.parse(receipts[0].observed_result.firedAt)).toBeGreaterThanOrEqual(Date.parse(receipts[0].observed_result.dueAt));
    expect(seen).toEqual([{ nap: receipts[0].observed_result, first: { n: 7 } }]);
  } finally {
    await worker.stop();
  }
});

test("a timer due in the future is not fired by any keeper pass until the database clock reaches it", async ({ db }) => {
  const workflow = napThenRead("timer-future", 60_000);
  const [request] = await createRequestsOf(db.pool, workflow, [{ n: 1 }]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const napId = request!.stepIds.get("nap")!;
    await until("the timer to be armed", () => timerOf(db.pool, napId));
    for (let pass = 0; pass < 5; pass += 1) expect((await settleDue(db.pool, dueWork, 100)).settled).toBe(0);
    expect((await timerOf(db.pool, napId))!.state).toBe("waiting");
    const { nextDueInMs } = await settleDue(db.pool, dueWork, 100);
    expect(nextDueInMs).toBeGreaterThan(55_000);
    // The database clock passes the due time (moved by the test, as the kit does).
    await db.pool.query(`UPDATE timer SET due_at = now() - interval '1 millisecond' WHERE step_id = $1`, [napId]);
    await until("the request to complete", async () =>
      (await db.pool.query(`SELECT 1 FROM workflow WHERE id = $1 AND status = 'completed'`, [request!.workflowId])).rows[0],
    );
  } finally {
    await worker.stop();
  }
});

test("many keepers racing over the same due timers fire each exactly once", async ({ db }) => {
  const workflow = defineWorkflow({ kind: "timer-race", version: 1, input: z.object({}) }).timer("nap", { milestone, afterMs: 3_600_000 });
  const requests = await createRequestsOf(db.pool, workflow, Array.from({ length: 60 }, () => ({})));
  // A worker arms them (an hour away) and stops; then they all come due at once.
  const armer = testWorker(db.pool, [workflow], { concurrency: 30 });
  await armer.start();
  try {
    await until("every timer armed", async () => {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM timer t JOIN workflow w ON w.id = t.workflow_id WHERE t.state = 'waiting' AND w.kind = 'timer-race'`);
      return rows[0]!.n === requests.length ? true : null;
    });
  } finally {
    await armer.stop();
  }
  await db.pool.query(`UPDATE timer t SET due_at = now() - interval '1 millisecond' FROM workflow w WHERE w.id = t.workflow_id AND w.kind = 'timer-race'`);
  const pools = Array.from({ length: 4 }, () => createPool(db.url, { applicationName: "keeper", max: 2 }));
  try {
    const settledBy = await Promise.all(
      pools.map(async (pool) => {
        let settled = 0;
        for (;;) {
          const pass = await settleDue(pool, dueWork, 7);
          settled += pass.settled;
          if (pass.settled === 0 && (pass.nextDueInMs === null || pass.nextDueInMs > 0)) return settled;
        }
      }),
    );
    const { rows } = await db.pool.query<{ receipts: number; steps: number; fired: number }>(
      `WITH race AS (SELECT id FROM workflow WHERE kind = 'timer-race')
       SELECT (SELECT count(*)::int FROM receipt WHERE workflow_id IN (SELECT id FROM race)) AS receipts,
              (SELECT count(*)::int FROM step WHERE workflow_id IN (SELECT id FROM race) AND state = 'completed') AS steps,
              (SELECT count(*)::int FROM timer WHERE workflow_id IN (SELECT id FROM race) AND state = 'fired') AS fired`,
    );
    expect(rows[0]).toEqual({ receipts: 60, steps: 60, fired: 60 });
    expect(settledBy.reduce((sum, n) => sum + n, 0)).toBe(60);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

test("cancelling a request ends its waiting timer: the step is cancelled and the timer never fires", async ({ db }) => {
  const workflow = napThenRead("timer-cancel", 60_000);
  const [request] = await createRequestsOf(db.pool, workflow, [{ n: 1 }]);
  const worker = testWorker(db.pool, [workflow]);
  await worker.start();
  try {
    const napId = request!.stepIds.get("nap")!;
    await until("the timer to be armed", () => timerOf(db.pool, napId));
    expect(await cancelWorkflow(db.pool, request!.workflowId, "customer changed their mind")).toBe(true);
    const cancelled = (await timerOf(db.pool, napId))!;
    expect(cancelled.state).toBe("cancelled");
    await db.pool.query(`UPDATE timer SET due_at = now() - interval '1 second' WHERE step_id = $1`, [napId]);
    expect((await timerRoom.settleDue(db.pool, 100))).toBe(0);
    const { rows } = await db.pool.query(`SELECT state FROM step WHERE workflow_id = $1 ORDER BY position`, [request!.workflowId]);
    expect(rows.map((row) => row.state)).toEqual(["completed", "cancelled", "cancelled"]);
    expect((await db.pool.query(`SELECT 1 FROM receipt WHERE step_id = $1`, [napId])).rows).toHaveLength(0);
  } finally {
    await worker.stop();
  }
});

/** Plan nodes of an EXPLAIN (FORMAT JSON) that scan a CTE more than once: a nested loop over two lists. */
function rescannedCtes(plan: Record<string, unknown>): string[] {
  const children = ((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(rescannedCtes);
  return plan["Node Type"] === "CTE Scan" && Number(plan["Actual Loops"]) > 1 ? [`${String(plan["CTE Name"])} × ${String(plan["Actual Loops"])}`, ...children] : children;
}

test("a keeper's pass stays linear whatever the statistics say: no list of due timers or receipts is scanned once per row of another", async ({ db }) => {
  const workflow = defineWorkflow({ kind: "timer-linear", version: 1, input: z.object({}) })
    .timer("nap", { milestone, afterMs: 3_600_000 })
    .step("after", { dependsOn: ["nap"], milestone, run: async () => done() });
  const requests = await createRequestsOf(db.pool, workflow, Array.from({ length: 100 }, () => ({})));
  const armer = testWorker(db.pool, [workflow], { concurrency: 50 });
  await armer.start();
  try {
    await until("every timer armed", async () => {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM timer WHERE state = 'waiting'`);
      return rows[0]!.n === requests.length ? true : null;
    });
  } finally {
    await armer.stop();
  }
  // Statistics taken while every timer is an hour away estimate one due row, as in production.
  await db.pool.query("ANALYZE");
  await db.pool.query(`UPDATE timer SET due_at = now() - interval '1 millisecond'`);
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    // The plan a keeper's prepared statements settle on after a few passes.
    await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
    await client.query(`PREPARE fire(int) AS ${fireDueTimers.text}`);
    const ids = (await client.query<{ step_id: string }>(`SELECT step_id FROM timer WHERE state = 'waiting'`)).rows.map((row) => row.step_id);
    const [fire] = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE fire(${requests.length})`)).rows[0]["QUERY PLAN"];
    expect(fire.Plan["Actual Rows"]).toBe(requests.length);
    expect(rescannedCtes(fire.Plan)).toEqual([]);
    await client.query(`PREPARE settle(uuid[], jsonb[], verification_method[], text[]) AS ${settleWaitingSteps.text}`);
    const [settle] = (
      // EXECUTE takes no bind parameters: the timers just fired, as literals.
      await client.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE settle(ARRAY[${ids.map((id) => client.escapeLiteral(id)).join(", ")}]::uuid[], array_fill('{}'::jsonb, ARRAY[${ids.length}]),
                                                       array_fill('database_clock'::verification_method, ARRAY[${ids.length}]), array_fill(NULL::text, ARRAY[${ids.length}]))`,
      )
    ).rows[0]["QUERY PLAN"];
    expect(settle.Plan["Actual Rows"]).toBe(requests.length);
    expect(rescannedCtes(settle.Plan)).toEqual([]);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
});
