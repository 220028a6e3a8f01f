/**
 * The event room: a step that waits for a named event with a correlation key, for at most a
 * timeout. Arming records the wait and, under the correlation's lock, takes the oldest event that
 * arrived before it (kept for this), settling the step at once. Otherwise a send settles it
 * (lib/events/send.ts), or a keeper times it out on the database clock: with `continue` the step
 * completes with `{ received: false, timedOutAt }`, with `fail` the request fails.
 */
import { randomBytes } from "node:crypto";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { assertAllSettled, failWaitingSteps, settleWaitingSteps, type WaitRoom } from "@/lib/engine/waits";
import { eventWaitRequestSchema, type EventWaitRequest } from "./definition";
import * as sql from "./sql";
import type { Consumer } from "./types";

/** A one-time URL's secret: 192 random bits, URL-safe, like a tracking token. */
const newUrlToken = (): string => randomBytes(24).toString("base64url");

/** The path a third party POSTs the payload to, relative to Fenceline's URL. */
export const waitUrlPath = (token: string): string => `/api/events/url/${token}`;

/** What a statement that delivers an event returns for the wait it moved to `received`. */
export type DeliveredRow = {
  received_step_id: string;
  settled_step_id: string | null;
  workflow_id: string | null;
  step_name: string | null;
  trace_parent: string | null;
};

/** The wait that received an event, as its sender reads it; throws when its step did not settle with it (the room and the step disagree). */
export function consumerOf(row: DeliveredRow): Consumer & { traceParent: string | null } {
  assertAllSettled("event", [row.received_step_id], new Set(row.settled_step_id === null ? [] : [row.settled_step_id]));
  return { requestId: row.workflow_id!, step: row.step_name!, traceParent: row.trace_parent };
}

/** Settles the wait of `stepId` with event `eventId`, if it still waits (through `urlToken` when given); null when it no longer does. */
export async function deliverEvent(db: Queryable, stepId: string, eventId: string, urlToken: string | null = null): Promise<(Consumer & { traceParent: string | null }) | null> {
  const [delivered] = await run<DeliveredRow>(db, sql.receiveEvent, [stepId, eventId, urlToken]);
  return delivered ? consumerOf(delivered) : null;
}

export const eventRoom: WaitRoom = {
  name: "event",
  record: { table: "event_wait", waitingFor: "event" },
  request: eventWaitRequestSchema,
  async arm(client, step, request) {
    const asked = request as EventWaitRequest;
    await run(client, sql.lockCorrelation, [asked.name, asked.key]);
    const urlToken = asked.url ? newUrlToken() : null;
    const [armed] = await run<{ timeout_at: Date | null }>(client, sql.armEventWait, [
      step.stepId,
      step.workflowId,
      asked.name,
      asked.key,
      asked.timeoutMs,
      asked.onTimeout,
      urlToken,
    ]);
    const [early] = await run<{ id: string }>(client, sql.oldestUnconsumedEvent, [asked.name, asked.key]);
    const settled = early ? (await deliverEvent(client, step.stepId, early.id)) !== null : false;
    return {
      room: "event",
      settled,
      dueAt: settled ? null : armed!.timeout_at,
      detail: { name: asked.name, key: asked.key, timeoutAt: armed!.timeout_at?.toISOString() ?? null, ...(urlToken ? { url: waitUrlPath(urlToken) } : {}) },
    };
  },
  async settleDue(pool, limit) {
    return inTransaction(pool, async (client) => {
      const due = await run<{ step_id: string; name: string; correlation_key: string; on_timeout: "fail" | "continue"; settled_at: Date }>(client, sql.timeOutDueWaits, [limit]);
      if (due.length === 0) return 0;
      const continuing = due.filter((wait) => wait.on_timeout === "continue");
      const failing = due.filter((wait) => wait.on_timeout === "fail");
      const completed = await settleWaitingSteps(
        client,
        continuing.map((wait) => ({ stepId: wait.step_id, result: { received: false, timedOutAt: wait.settled_at.toISOString() }, verification: "database_clock", externalReference: null })),
      );
      const failed = await failWaitingSteps(
        client,
        failing.map((wait) => ({ stepId: wait.step_id, reason: `no ${wait.name} event for ${wait.correlation_key} arrived before the wait timed out` })),
      );
      assertAllSettled("event", due.map((wait) => wait.step_id), new Set([...completed, ...failed]));
      return due.length;
    });
  },
  async nextDueInMs(db) {
    const [row] = await run<{ in_ms: number | null }>(db, sql.nextTimeout, []);
    return row?.in_ms ?? null;
  },
};
