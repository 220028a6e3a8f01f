/**
 * Steps that wait: the one seam through which the core reaches the rooms that hold waiting steps
 * (lib/timers, lib/events). A wait step runs like any step until its handler has worked out what
 * to wait for; then, instead of a receipt, it parks:
 *
 *   leased ──park──▶ waiting ──settle──▶ completed   (a receipt: verified by the database clock or by an event)
 *                            └──fail────▶ failed      (the request fails, as when any step fails)
 *                            └──cancel──▶ cancelled   (the request was cancelled or ended otherwise)
 *
 * While waiting the step holds no lease and no permit and nothing claims it; the room keeps its
 * own record (due time, correlation key) and its own statements. Parking and arming commit
 * together, so a wait is either fully recorded or the attempt still holds its lease. A room
 * settles a step only after moving its own record out of `waiting` in the same transaction,
 * which makes every settlement happen at most once.
 *
 * Time-driven work (timers that fire, waits that time out, and anything else the database clock
 * makes due) is `DueWork`: the coordinators' keepers ask each for what is due now and sleep until
 * the earliest next one (settleDue). Work made due by a change a keeper did not make (a child's
 * end) notifies `DUE_NOW_CHANNEL` in that change's transaction, and the keepers look at once.
 */
import type { Pool, PoolClient } from "pg";
import type { z } from "zod";
import { inTransaction, run, type Queryable } from "./db";
import { InvalidWaitError } from "./errors";
import { recordRejection } from "./rejection";
import * as sql from "./sql/waits";

/**
 * For a room whose own statement moves its record and settles the step in one round trip: the
 * settlement of settleWaitingSteps as an SQL fragment, and the expression that defers the
 * transaction's step-ready notification to notifyStepsReady after the commit.
 */
export { stepsReadyNotifiedAfterCommit, waitingStepsSettled } from "./sql/waits";
import type { ArmedWait, LeaseHandle, WaitRequest } from "./types";
import type { VerificationMethod } from "./vocabulary";

/** A step that has just parked, as its room sees it inside the parking transaction. */
export type ParkedStep = {
  readonly stepId: string;
  readonly workflowId: string;
  /** The attempt that armed the wait; the receipt that settles the step will be its. */
  readonly attemptId: string;
  /** When the step became ready (its last dependency's completion, or the request's creation), on the database clock. */
  readonly readyAt: Date;
  readonly dbNow: Date;
};

/**
 * The channel a room notifies, in the transaction that makes something due now outside the
 * keepers' sight (a child's end makes its parent's wait due): the keepers LISTEN on it and look at
 * once instead of at their next look. The notice is only a hint; the rows decide.
 */
export const DUE_NOW_CHANNEL = "fenceline_due_now";

/** Work the database clock makes due: each pass settles what is due now, at most `limit` of it. */
export type DueWork = {
  readonly name: string;
  /** Settles up to `limit` things due now; returns how many. */
  settleDue(pool: Pool, limit: number): Promise<number>;
  /** Milliseconds from now, on the database clock, until the next thing is due (≤ 0: due now); null when nothing is scheduled. */
  nextDueInMs(db: Queryable): Promise<number | null>;
};

/**
 * Where the engineers' reads (lib/waits) find a room's waits: its record table, which has
 * `step_id`, `state` (`waiting` exactly while its step waits), `armed_at` and `settled_at`; and the
 * word engineers filter by ("waiting for time"). Constants of the room, never input.
 */
export type WaitRecord = { readonly table: string; readonly waitingFor: string };

/** A room that holds waiting steps. */
export type WaitRoom = DueWork & {
  readonly record: WaitRecord;
  /** Checks a worker's request, which came over the wire. */
  readonly request: z.ZodType;
  /** Records the wait of a step that just parked, in the parking transaction; may settle it at once. */
  arm(client: PoolClient, step: ParkedStep, request: unknown): Promise<ArmedWait>;
};

/**
 * Parks the step of `lease` and arms its wait in `rooms`, in one transaction. Throws
 * AuthorityLostError when the lease no longer holds authority (recorded as a fencing rejection),
 * InvalidWaitError when the request does not fit its room.
 */
export async function parkStep(pool: Pool, rooms: readonly WaitRoom[], lease: LeaseHandle, wait: WaitRequest, reason: string): Promise<ArmedWait> {
  const room = rooms.find((candidate) => candidate.name === wait.room);
  if (!room) throw new InvalidWaitError(`no wait room named ${JSON.stringify(wait.room)}: one of ${rooms.map((r) => r.name).join(", ")}`);
  const parsed = room.request.safeParse(wait.request);
  if (!parsed.success) throw new InvalidWaitError(`${wait.room} wait: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`).join("; ")}`);
  const armed = await inTransaction(pool, async (client) => {
    await run(client, sql.lockRequestOfStep, [lease.stepId]);
    const [row] = await run<{ step_id: string; workflow_id: string; attempt_id: string; ready_at: Date; db_now: Date }>(client, sql.parkStep, [
      lease.sessionId,
      lease.stepId,
      lease.fencingTerm.toString(),
      reason.slice(0, 500),
    ]);
    if (!row) return null;
    return room.arm(client, { stepId: row.step_id, workflowId: row.workflow_id, attemptId: row.attempt_id, readyAt: row.ready_at, dbNow: row.db_now }, parsed.data);
  });
  if (armed) return armed;
  const rejection = await recordRejection(pool, lease, "park", null);
  if (rejection) throw rejection;
  throw new InvalidWaitError(`step ${lease.stepId} cannot park: its invocation began`);
}

/** A waiting step's conclusion, as its room settles it. */
export type WaitSettlement = {
  readonly stepId: string;
  readonly result: unknown;
  readonly verification: Extract<VerificationMethod, "database_clock" | "event_received" | "children_ended">;
  /** What proves it outside the step: the event's id, for one that an event settled. */
  readonly externalReference: string | null;
};

/** Completes waiting steps with receipts; returns the steps settled (a step no longer waiting, or of an ended request, is not). */
export async function settleWaitingSteps(db: Queryable, settlements: readonly WaitSettlement[]): Promise<Set<string>> {
  if (settlements.length === 0) return new Set();
  const rows = await run<{ step_id: string }>(db, sql.settleWaitingSteps, [
    settlements.map((s) => s.stepId),
    settlements.map((s) => JSON.stringify(s.result ?? null)),
    settlements.map((s) => s.verification),
    settlements.map((s) => s.externalReference),
  ]);
  return new Set(rows.map((row) => row.step_id));
}

/**
 * A room's record left `waiting` only while its step waited, and the request it locked was
 * active; a step that did not settle would mean the two disagreed. The room's triggers and the
 * parking transaction keep them together, so this is a programmer error: the pass rolls back.
 */
export function assertAllSettled(room: string, stepIds: readonly string[], settled: ReadonlySet<string>): void {
  const unsettled = stepIds.filter((stepId) => !settled.has(stepId));
  if (unsettled.length > 0) throw new Error(`${room} room: steps ${unsettled.join(", ")} left their wait but did not settle: the room and the steps disagree`);
}

/** Wakes the workers after a transaction that deferred its step-ready notification (stepsReadyNotifiedAfterCommit) committed. */
export async function notifyStepsReady(db: Queryable): Promise<void> {
  await run(db, sql.notifyStepsReady, []);
}

/** Fails waiting steps, and their requests with them; returns the steps failed. */
export async function failWaitingSteps(db: Queryable, failures: readonly { readonly stepId: string; readonly reason: string }[]): Promise<Set<string>> {
  if (failures.length === 0) return new Set();
  const rows = await run<{ step_id: string }>(db, sql.failWaitingSteps, [failures.map((f) => f.stepId), failures.map((f) => f.reason.slice(0, 500))]);
  return new Set(rows.map((row) => row.step_id));
}

/** One keeper pass: settles what is due in every kind of due work, and says when to look next. */
export async function settleDue(pool: Pool, works: readonly DueWork[], limit: number): Promise<{ settled: number; nextDueInMs: number | null }> {
  let settled = 0;
  for (const work of works) settled += await work.settleDue(pool, limit);
  let next: number | null = null;
  for (const work of works) {
    const inMs = await work.nextDueInMs(pool);
    if (inMs !== null && (next === null || inMs < next)) next = inMs;
  }
  return { settled, nextDueInMs: next };
}
