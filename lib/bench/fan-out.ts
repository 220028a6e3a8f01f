/**
 * Fan-out: one step starts 1,000 child requests (the bound) and waits for them (issue 30). Two
 * worker processes of concurrency 50 on the direct transport (the throughput part's settings),
 * each serving `bench-fan-out` and `bench-fan-child` (lib/bench/workflows.ts), in a fresh
 * database; one parent request written before the workers start. All times are on the database
 * clock, from the parent step's claim (its attempt's creation):
 *
 * - children written: the parking transaction that wrote every child (its start: the handler
 *   worked out 1,000 inputs before it);
 * - all started: the last child whose step was first claimed;
 * - all completed: the last child's completion (its receipt);
 * - parent settled: the parent step's receipt, written by a keeper once the last child ended;
 * - next step claimed: the parent's next step first claimed, counted from the last child's end
 *   (its `child_request.ended_at`, the ending transaction's time).
 *
 * Then the children are counted: one per index, no duplicate. Last, with the same workers, the
 * wake-up alone: `WAKE_PARENTS` small parents (`WAKE_CHILDREN` children each), one started every
 * `WAKE_EVERY_MS` so their ends fall at any point of a keeper's sleep, each timed from its last
 * child's end to its next step's first claim (p50, p99).
 */
import type pg from "pg";
import { registeredWorkflow } from "@/lib/definitions/registration";
import type { WorkflowDefinition } from "@/lib/definitions/workflow";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { createWorkflows } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { FENCELINE_CONCURRENCY, FENCELINE_PROCESSES, freshDatabase } from "./engines";
import { spawnChild } from "./processes";
import { percentile, round, sleep } from "./stats";
import { benchFanOut } from "./workflows";

export const FAN_OUT_CHILDREN = 1_000;
const TIMEOUT_MS = 5 * 60_000;
const WAKE_PARENTS = 100;
const WAKE_CHILDREN = 2;
const WAKE_EVERY_MS = 50;

export type FanOutRun = {
  readonly children: number;
  readonly childrenWrittenMs: number;
  readonly allStartedMs: number;
  readonly allCompletedMs: number;
  readonly parentSettledMs: number;
  /** From the last child's end to the parent's next step's first claim. */
  readonly nextClaimedAfterLastChildMs: number;
  readonly duplicateChildren: number;
  /** The same, over `parents` small parents started apart (ms). */
  readonly wake: { readonly parents: number; readonly children: number; readonly everyMs: number; readonly p50: number; readonly p99: number; readonly max: number };
};

export type FanOutResult = FanOutRun & { readonly runs: readonly FanOutRun[]; readonly workers: number; readonly concurrency: number };

/** Last child's end → next step's first claim, per parent request, in ms on the database clock. */
const NEXT_CLAIM_AFTER_LAST_CHILD = `
SELECT extract(epoch FROM (SELECT min(a.created_at) FROM step s JOIN attempt a ON a.step_id = s.id WHERE s.workflow_id = w.id AND s.name = 'after')
                          - (SELECT max(c.ended_at) FROM child_request c WHERE c.parent_workflow_id = w.id)) * 1000 AS ms
FROM workflow w WHERE w.id = ANY($1::uuid[])`;

const createParent = async (db: { pool: pg.Pool }, children: number) => {
  const [parent] = await createWorkflows(db.pool, [
    instantiateWorkflow(registeredWorkflow(benchFanOut as WorkflowDefinition), { children }, { requester: "bench", idempotencyKey: null, deadlineAt: null }),
  ]);
  return parent!;
};

/** Waits until none of `ids` is active; throws past the part's timeout or when one did not complete. */
async function untilEnded(db: { pool: pg.Pool }, ids: readonly string[]): Promise<void> {
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    const { rows } = await db.pool.query<{ status: string; n: number }>(`SELECT status::text, count(*)::int AS n FROM workflow WHERE id = ANY($1::uuid[]) GROUP BY status`, [ids]);
    if (!rows.some((row) => row.status === "active")) {
      const other = rows.find((row) => row.status !== "completed");
      if (other) throw new Error(`fan-out: ${other.n} parent(s) ended ${other.status}`);
      return;
    }
    if (performance.now() > deadline) throw new Error(`fan-out: the parents did not end within ${TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
}

async function runOnce(children: number, log: (line: string) => void): Promise<FanOutRun> {
  const db = await freshDatabase("fenceline_bench_fan_out");
  const workers = [] as ReturnType<typeof spawnChild>[];
  try {
    await deployMigrations(db.url);
    const parent = await createParent(db, children);
    const fanId = parent!.stepIds.get("fan")!;
    for (let i = 0; i < FENCELINE_PROCESSES; i += 1) {
      workers.push(spawnChild({ role: "fenceline-worker", transport: "direct", databaseUrl: db.url, concurrency: FENCELINE_CONCURRENCY, children: true }));
    }
    await Promise.all(workers.map((worker) => worker.ready));
    await untilEnded(db, [parent.workflowId]);
    const { rows } = await db.pool.query<{
      status: string;
      written_ms: number;
      started_ms: number;
      completed_ms: number;
      settled_ms: number;
      links: number;
      requests: number;
      indexes: number;
    }>(
      `WITH claim AS (SELECT min(created_at) AS at FROM attempt WHERE step_id = $1),
            kids AS (SELECT child_workflow_id AS id FROM child_request WHERE parent_step_id = $1)
       SELECT (SELECT status::text FROM workflow WHERE id = $2) AS status,
              extract(epoch FROM (SELECT armed_at FROM child_wait WHERE step_id = $1) - (SELECT at FROM claim)) * 1000 AS written_ms,
              extract(epoch FROM (SELECT max(first) FROM (SELECT min(a.created_at) AS first FROM attempt a JOIN step s ON s.id = a.step_id
                                                          WHERE s.workflow_id IN (SELECT id FROM kids) GROUP BY s.workflow_id) f) - (SELECT at FROM claim)) * 1000 AS started_ms,
              extract(epoch FROM (SELECT max(r.created_at) FROM receipt r WHERE r.workflow_id IN (SELECT id FROM kids)) - (SELECT at FROM claim)) * 1000 AS completed_ms,
              extract(epoch FROM (SELECT created_at FROM receipt WHERE step_id = $1) - (SELECT at FROM claim)) * 1000 AS settled_ms,
              (SELECT count(*)::int FROM kids) AS links,
              (SELECT count(*)::int FROM workflow WHERE kind = 'bench-fan-child') AS requests,
              (SELECT count(DISTINCT index)::int FROM child_request WHERE parent_step_id = $1) AS indexes`,
      [fanId, parent.workflowId],
    );
    const row = rows[0]!;
    if (row.status !== "completed") throw new Error(`fan-out: the parent ended ${row.status}`);
    const [next] = (await db.pool.query<{ ms: number }>(NEXT_CLAIM_AFTER_LAST_CHILD, [[parent.workflowId]])).rows;

    const small: string[] = [];
    for (let i = 0; i < WAKE_PARENTS; i += 1) {
      small.push((await createParent(db, WAKE_CHILDREN)).workflowId);
      await sleep(WAKE_EVERY_MS);
    }
    await untilEnded(db, small);
    const wakeMs = (await db.pool.query<{ ms: number }>(NEXT_CLAIM_AFTER_LAST_CHILD, [small])).rows.map((r) => Number(r.ms));
    const run: FanOutRun = {
      children: row.links,
      childrenWrittenMs: round(Number(row.written_ms), 0),
      allStartedMs: round(Number(row.started_ms), 0),
      allCompletedMs: round(Number(row.completed_ms), 0),
      parentSettledMs: round(Number(row.settled_ms), 0),
      nextClaimedAfterLastChildMs: round(Number(next!.ms), 0),
      duplicateChildren: row.requests - row.indexes,
      wake: { parents: WAKE_PARENTS, children: WAKE_CHILDREN, everyMs: WAKE_EVERY_MS, p50: round(percentile(wakeMs, 50), 1), p99: round(percentile(wakeMs, 99), 1), max: round(Math.max(...wakeMs), 1) },
    };
    log(
      `  ${run.children} children: written after ${run.childrenWrittenMs} ms, all started ${run.allStartedMs} ms, all completed ${run.allCompletedMs} ms, parent settled ${run.parentSettledMs} ms, ` +
        `next step claimed ${run.nextClaimedAfterLastChildMs} ms after the last child's end; ${run.duplicateChildren} duplicates`,
    );
    log(`  ${WAKE_PARENTS} parents of ${WAKE_CHILDREN} children, last child's end → next step claimed: p50 ${run.wake.p50} ms, p99 ${run.wake.p99} ms, max ${run.wake.max} ms`);
    return run;
  } finally {
    for (const worker of workers) await worker.stop();
    await db.drop();
  }
}

/** `rounds` runs of one parent fanning out `children` children; the median run by time to all completed. */
export async function measureFanOut(rounds: number, log: (line: string) => void, children = FAN_OUT_CHILDREN): Promise<FanOutResult> {
  const runs: FanOutRun[] = [];
  for (let r = 0; r < rounds; r += 1) {
    log(`fan-out (round ${r + 1}/${rounds}): one step starts ${children} child requests, ${FENCELINE_PROCESSES} workers of concurrency ${FENCELINE_CONCURRENCY}, direct transport`);
    runs.push(await runOnce(children, log));
  }
  const median = percentile(runs.map((run) => run.allCompletedMs), 50);
  const chosen = runs.find((run) => run.allCompletedMs >= median) ?? runs[0]!;
  return { ...chosen, runs, workers: FENCELINE_PROCESSES, concurrency: FENCELINE_CONCURRENCY };
}
