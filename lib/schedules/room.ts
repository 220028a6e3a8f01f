/**
 * The schedule room: time-driven work the keepers do (DueWork, lib/engine/waits.ts). Each pass
 * takes the schedules with work now on the database clock (a due time reached, or a queued
 * firing whose previous request has ended), decides each due time by the schedule's declared
 * policies, and in one transaction writes the firings, creates their requests and moves each
 * schedule on to its next due time:
 *
 *  - catch-up: the due times reached since the last pass are walked (bounded); `none` starts only
 *    one reached on time (ON_TIME_MS), `latest` the latest, `all` the latest `catchUpLimit`; the
 *    rest are counted as missed.
 *  - overlap, in due order: `allow` starts each; `skip` starts one only while no request of the
 *    schedule runs; `queue_one` queues one (started when the running one ends) and skips the rest.
 *
 * A due time starts at most one request (invariant 13): one keeper holds the schedule's row for
 * the pass; the firing's key (schedule, due time) is its primary key and its request's idempotency
 * key, so even a second pass over the same due time writes nothing.
 */
import type { PoolClient } from "pg";
import type { RegisteredWorkflow } from "@/lib/definitions/registration";
import { inTransaction, run } from "@/lib/engine/db";
import { FencelineError } from "@/lib/engine/errors";
import { findWorkflowDefinition } from "@/lib/engine/registration";
import type { DueWork } from "@/lib/engine/waits";
import { createWorkflows, type WorkflowDraft } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { firingKey, inputAt, ON_TIME_MS, type CatchUpPolicy, type OverlapPolicy } from "./definition";
import * as sql from "./sql";
import { DueTimes, type DstGap } from "./times";

/** A schedule's row as the statements return it. */
export type ScheduleRow = {
  id: string;
  name: string;
  owner: string;
  kind: string;
  version: number;
  input: unknown;
  due_time_field: string | null;
  cron: string;
  time_zone: string;
  dst_gap: DstGap;
  overlap: OverlapPolicy;
  catch_up: CatchUpPolicy;
  catch_up_limit: number;
  state: "active" | "paused";
  next_due_at: Date | null;
  last_due_at: Date | null;
  queued_due_at: Date | null;
  missed: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  db_now: Date;
};

type FiringState = "started" | "skipped" | "queued" | "failed";
type Firing = { scheduleId: string; dueAt: Date; state: FiringState; requestId: string | null; reason: string | null };
type Plan = { row: ScheduleRow; firings: Firing[]; release: Date | null; next: Date | null; last: Date | null; queued: Date | null; missed: number };

const compiled = new Map<string, DueTimes>();

/** The due times of a schedule's cadence, compiled once per cadence. */
export function dueTimesOf(row: Pick<ScheduleRow, "cron" | "time_zone" | "dst_gap">): DueTimes {
  const key = `${row.cron}\u0000${row.time_zone}\u0000${row.dst_gap}`;
  let times = compiled.get(key);
  if (!times) {
    if (compiled.size >= 10_000) compiled.clear();
    times = new DueTimes({ cron: row.cron, timeZone: row.time_zone, dstGap: row.dst_gap });
    compiled.set(key, times);
  }
  return times;
}

type Walk = ReturnType<DueTimes["dueUpTo"]>;

/**
 * Decides a taken schedule's due times (pure: the statements apply it). `walks` memoises the
 * walk over due times within one pass: schedules of one cadence due together (every hourly
 * schedule at the top of the hour) share it, and a walk costs a cron evaluation or more each.
 */
export function planOf(row: ScheduleRow & { running: boolean }, walks: Map<string, Walk> = new Map()): Plan {
  const now = row.db_now;
  let running = row.running;
  const firings: Firing[] = [];
  let release: Date | null = null;
  let queued = row.queued_due_at;
  if (queued && !running) {
    release = queued;
    queued = null;
    running = true;
  }
  if (!row.next_due_at || row.next_due_at.getTime() > now.getTime()) {
    return { row, firings, release, next: row.next_due_at, last: row.last_due_at, queued, missed: 0 };
  }
  const times = dueTimesOf(row);
  const keep = row.catch_up === "all" ? row.catch_up_limit : 1;
  const walkKey = `${row.cron}\u0000${row.time_zone}\u0000${row.dst_gap}\u0000${row.next_due_at.getTime()}\u0000${row.last_due_at?.getTime() ?? ""}\u0000${now.getTime()}\u0000${keep}`;
  let walk = walks.get(walkKey);
  if (!walk) {
    walk = times.dueUpTo(row.next_due_at, row.last_due_at, now, keep);
    walks.set(walkKey, walk);
  }
  const last = walk.latest.at(-1) ?? row.last_due_at;
  let toStart: Date[] = [];
  if (!walk.exhausted) {
    if (row.catch_up === "none") toStart = walk.latest.filter((due) => now.getTime() - due.getTime() <= ON_TIME_MS);
    else toStart = walk.latest;
  }
  for (const dueAt of toStart) {
    const firing: Firing = { scheduleId: row.id, dueAt, state: "started", requestId: null, reason: null };
    if (running && row.overlap === "skip") Object.assign(firing, { state: "skipped", reason: "the previous request was still running" });
    else if (running && row.overlap === "queue_one") {
      if (queued) Object.assign(firing, { state: "skipped", reason: "the previous request was still running and one firing was already queued" });
      else {
        Object.assign(firing, { state: "queued", reason: "queued behind the previous request" });
        queued = dueAt;
      }
    }
    if (firing.state === "started") running = true;
    firings.push(firing);
  }
  return { row, firings, release, next: walk.next, last, queued, missed: walk.walked - toStart.length };
}

/** The definition each firing starts, looked up once per pass. */
async function definitionsFor(client: PoolClient, rows: readonly ScheduleRow[]): Promise<Map<string, RegisteredWorkflow | null>> {
  const definitions = new Map<string, RegisteredWorkflow | null>();
  for (const row of rows) {
    const key = `${row.kind}@${row.version}`;
    if (!definitions.has(key)) definitions.set(key, await findWorkflowDefinition(client, row.kind, row.version));
  }
  return definitions;
}

/** Creates the requests of the firings to start, as drafts in one statement; a firing that cannot start is failed with its reason. */
async function startRequests(client: PoolClient, starts: readonly { row: ScheduleRow; firing: Firing }[]): Promise<void> {
  if (starts.length === 0) return;
  const definitions = await definitionsFor(client, starts.map((start) => start.row));
  const drafts: { firing: Firing; draft: WorkflowDraft }[] = [];
  for (const { row, firing } of starts) {
    const definition = definitions.get(`${row.kind}@${row.version}`);
    if (!definition) {
      Object.assign(firing, { state: "failed", reason: `${row.kind}@${row.version} is not registered: start a worker that serves it` });
      continue;
    }
    try {
      const draft = instantiateWorkflow(definition, inputAt({ input: row.input, dueTimeField: row.due_time_field }, firing.dueAt), {
        requester: row.owner,
        idempotencyKey: firingKey(row.id, firing.dueAt),
        deadlineAt: null,
      });
      drafts.push({ firing, draft });
    } catch (error) {
      if (!(error instanceof FencelineError)) throw error;
      Object.assign(firing, { state: "failed", reason: error.message.slice(0, 500) });
    }
  }
  if (drafts.length === 0) return;
  const created = await createWorkflows(client, drafts.map((d) => d.draft));
  created.forEach((request, index) => {
    drafts[index]!.firing.requestId = request.workflowId;
  });
}

/** One pass: takes up to `limit` schedules with work now, fires them, and returns the requests started. */
export async function fireDueSchedules(client: PoolClient, limit: number): Promise<number> {
  const rows = await run<ScheduleRow & { running: boolean }>(client, sql.takeDueSchedules, [limit]);
  if (rows.length === 0) return 0;
  const walks = new Map<string, Walk>();
  const plans = rows.map((row) => planOf(row, walks));
  const released = plans.filter((plan) => plan.release).map((plan) => ({ row: plan.row, firing: { scheduleId: plan.row.id, dueAt: plan.release!, state: "started" as FiringState, requestId: null, reason: null } }));
  const starts = plans.flatMap((plan) => plan.firings.filter((firing) => firing.state === "started").map((firing) => ({ row: plan.row, firing })));
  await startRequests(client, [...released, ...starts]);

  for (const { firing } of released) {
    const [updated] = await run(client, sql.releaseQueuedFiring, [firing.scheduleId, firing.dueAt, firing.requestId, firing.reason]);
    if (!updated) throw new Error(`schedule room: queued firing ${firing.scheduleId} at ${firing.dueAt.toISOString()} was not queued: the schedule and its firings disagree`);
  }
  const firings = plans.flatMap((plan) => plan.firings);
  let recordedStarts = 0;
  if (firings.length > 0) {
    // A due time already recorded (a pass over it before) keeps its row; its request, if any, was found by its key, not created.
    const recorded = await run<{ state: FiringState }>(client, sql.recordFirings, [
      firings.map((f) => f.scheduleId),
      firings.map((f) => f.dueAt),
      firings.map((f) => f.state),
      firings.map((f) => f.requestId),
      firings.map((f) => f.reason),
    ]);
    recordedStarts = recorded.filter((row) => row.state === "started").length;
  }
  const advanced = await run<{ id: string }>(client, sql.advanceSchedules, [
    plans.map((p) => p.row.id),
    plans.map((p) => p.row.next_due_at),
    plans.map((p) => p.next),
    plans.map((p) => p.last),
    plans.map((p) => p.queued),
    plans.map((p) => p.missed),
  ]);
  if (advanced.length !== plans.length) throw new Error("schedule room: a schedule taken for this pass changed under it: the pass rolls back");
  return released.filter((start) => start.firing.state === "started").length + recordedStarts;
}

export const scheduleRoom: DueWork = {
  name: "schedule",
  settleDue: (pool, limit) => inTransaction(pool, (client) => fireDueSchedules(client, limit)),
  async nextDueInMs(db) {
    const [row] = await run<{ in_ms: number | null }>(db, sql.nextScheduleDue, []);
    return row?.in_ms ?? null;
  },
};
