/**
 * Managing schedules: create (idempotent by name: the same definition again is the same
 * schedule), list, read with the next due times and the last firings, pause, resume, delete.
 * Every change is audited in its own transaction. An app manages only its own schedules
 * (`owner`); staff (owner null) all of them. Pausing drops what would fall due while paused:
 * resuming starts from the next due time after now, and a queued firing is dropped.
 */
import type { Pool } from "pg";
import { appendAudit, type AuditAction } from "@/lib/audit/append";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { FencelineError, NotFoundError } from "@/lib/engine/errors";
import { findWorkflowDefinition, registeredKinds } from "@/lib/engine/registration";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { firingKey, inputAt, scheduleSpecIssues, type ScheduleSpec } from "./definition";
import { InvalidScheduleError, ScheduleExistsError } from "./errors";
import { dueTimesOf, type ScheduleRow } from "./room";
import type { ScheduleFiringView, ScheduleView } from "./types";

export type { ScheduleFiringView, ScheduleView } from "./types";
import * as sql from "./sql";

/** How many due times ahead, and firings back, a schedule's view shows. */
export const UPCOMING_SHOWN = 5;
export const FIRINGS_SHOWN = 5;
export const MAX_SCHEDULES_PAGE = 100;

/** A schedule as asked for: its version pinned now, to the kind's highest registered one when null. */
export type ScheduleRequest = Omit<ScheduleSpec, "version"> & { readonly version: number | null };

type FiringRow = { schedule_id: string; due_at: Date; state: ScheduleFiringView["state"]; request_id: string | null; reason: string | null; fired_at: Date; request_status: string | null };

const specOf = (row: ScheduleRow): ScheduleSpec => ({
  name: row.name,
  kind: row.kind,
  version: row.version,
  input: row.input,
  dueTimeField: row.due_time_field,
  cron: row.cron,
  timeZone: row.time_zone,
  dstGap: row.dst_gap,
  overlap: row.overlap,
  catchUp: row.catch_up,
  catchUpLimit: row.catch_up_limit,
});

function viewOf(row: ScheduleRow, firings: readonly FiringRow[]): ScheduleView {
  const upcoming = row.state === "active" && row.next_due_at ? [row.next_due_at, ...dueTimesOf(row).upcoming(row.next_due_at, row.next_due_at, UPCOMING_SHOWN - 1)] : [];
  return {
    id: row.id,
    ...specOf(row),
    owner: row.owner,
    state: row.state,
    nextDueAt: row.next_due_at?.toISOString() ?? null,
    upcoming: upcoming.map((due) => due.toISOString()),
    lastFirings: firings.map((f) => ({
      dueAt: f.due_at.toISOString(),
      state: f.state,
      requestId: f.request_id,
      requestStatus: f.request_status,
      reason: f.reason,
      firedAt: f.fired_at.toISOString(),
      latenessMs: f.fired_at.getTime() - f.due_at.getTime(),
    })),
    missed: row.missed,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function viewsOf(db: StaffReadable, rows: readonly ScheduleRow[]): Promise<ScheduleView[]> {
  if (rows.length === 0) return [];
  const firings = await run<FiringRow>(db, sql.recentFirings, [rows.map((row) => row.id), FIRINGS_SHOWN]);
  return rows.map((row) => viewOf(row, firings.filter((f) => f.schedule_id === row.id)));
}


const sameSpec = (a: ScheduleSpec, b: ScheduleSpec): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
      : value;

/** Checks the spec, the pinned kind and version, and the input against that version's schema; InvalidScheduleError names each field. */
async function checkSpec(db: Queryable, asked: ScheduleRequest): Promise<ScheduleSpec> {
  const issues = scheduleSpecIssues({ ...asked, version: asked.version ?? 1 });
  if (issues.length > 0) throw new InvalidScheduleError(issues);
  const definition = await findWorkflowDefinition(db, asked.kind, asked.version);
  const spec: ScheduleSpec = { ...asked, version: definition?.version ?? asked.version ?? 1 };
  if (!definition) {
    const known = await registeredKinds(db);
    const versions = known.find((k) => k.kind === asked.kind)?.versions;
    throw new InvalidScheduleError(
      versions
        ? [{ path: "version", message: `${asked.kind} has no registered version ${asked.version} (registered: ${versions.join(", ")})` }]
        : [{ path: "kind", message: `no workflow kind "${asked.kind}" is registered (${known.length === 0 ? "none yet" : `registered: ${known.map((k) => k.kind).join(", ")}`})` }],
    );
  }
  try {
    // A firing's input is checked again when it starts; a spec whose first firing could not start is refused now.
    instantiateWorkflow(definition, inputAt(spec, new Date(0)), { requester: "schedule", idempotencyKey: firingKey("check", new Date(0)), deadlineAt: null });
  } catch (error) {
    if (!(error instanceof FencelineError)) throw error;
    const issues = "issues" in error ? (error.issues as { path: string; message: string }[]) : [{ path: "", message: error.message }];
    throw new InvalidScheduleError(issues.map((issue) => ({ path: issue.path ? `input.${issue.path}` : "input", message: issue.message })));
  }
  return spec;
}

async function audit(db: Queryable, actor: string, action: AuditAction, row: ScheduleRow, before: unknown, after: unknown): Promise<void> {
  await appendAudit(db, { actor, action, subjectType: "schedule", subjectId: row.name, before, after });
}

/**
 * Creates a schedule owned by `owner`, first due at the first due time after now, its version
 * pinned (the highest registered when not given). The same name
 * with the same definition and owner returns the existing one (`created: false`, nothing
 * written); with another definition, ScheduleExistsError. Nothing is written for a bad spec.
 */
export async function createSchedule(pool: Pool, asked: ScheduleRequest, owner: string, actor: string): Promise<{ created: boolean; schedule: ScheduleView }> {
  const spec = await checkSpec(pool, asked);
  const times = dueTimesOf({ cron: spec.cron, time_zone: spec.timeZone, dst_gap: spec.dstGap });
  return inTransaction(pool, async (client) => {
    const [{ now }] = (await client.query<{ now: Date }>("SELECT now()")).rows as [{ now: Date }];
    const [row] = await run<ScheduleRow>(client, sql.insertSchedule, [
      spec.name,
      owner,
      spec.kind,
      spec.version,
      JSON.stringify(spec.input ?? null),
      spec.dueTimeField,
      spec.cron,
      spec.timeZone,
      spec.dstGap,
      spec.overlap,
      spec.catchUp,
      spec.catchUpLimit,
      actor,
      times.next(now, null),
    ]);
    if (!row) {
      const [existing] = await run<ScheduleRow>(client, sql.scheduleByName, [spec.name, null]);
      if (!existing || existing.owner !== owner || !sameSpec(specOf(existing), spec)) throw new ScheduleExistsError(spec.name);
      return { created: false, schedule: (await viewsOf(client, [existing]))[0]! };
    }
    await audit(client, actor, "schedule.created", row, null, { ...specOf(row), owner, nextDueAt: row.next_due_at?.toISOString() ?? null });
    return { created: true, schedule: (await viewsOf(client, [row]))[0]! };
  });
}

/** Schedules by name (an owner's only, unless `owner` is null), a page of at most `limit` after `after`. */
export async function listSchedules(db: StaffReadable, owner: string | null, options: { readonly after?: string | null; readonly limit?: number } = {}): Promise<ScheduleView[]> {
  const limit = Math.min(Math.max(options.limit ?? MAX_SCHEDULES_PAGE, 1), MAX_SCHEDULES_PAGE);
  return viewsOf(db, await run<ScheduleRow>(db, sql.listSchedules, [owner, options.after ?? null, limit]));
}

/** One schedule by name; NotFoundError when there is none (or it is another owner's). */
export async function readSchedule(db: StaffReadable, name: string, owner: string | null): Promise<ScheduleView> {
  const [row] = await run<ScheduleRow>(db, sql.scheduleByName, [name, owner]);
  if (!row) throw new NotFoundError("schedule", name);
  return (await viewsOf(db, [row]))[0]!;
}

/** Locks the named schedule for a change; NotFoundError when there is none (or it is another owner's). */
async function lockSchedule(db: Queryable, name: string, owner: string | null): Promise<ScheduleRow> {
  const [row] = await run<ScheduleRow>(db, sql.lockScheduleByName, [name]);
  if (!row || (owner !== null && row.owner !== owner)) throw new NotFoundError("schedule", name);
  return row;
}

/** Pauses a schedule (nothing falls due; a queued firing is dropped); audited. Pausing a paused one changes nothing. */
export async function pauseSchedule(pool: Pool, name: string, owner: string | null, actor: string, reason: string | null = null): Promise<ScheduleView> {
  return inTransaction(pool, async (client) => {
    const row = await lockSchedule(client, name, owner);
    const [paused] = await run(client, sql.pauseSchedule, [row.id]);
    if (paused) await audit(client, actor, "schedule.paused", row, { state: row.state, nextDueAt: row.next_due_at?.toISOString() ?? null }, { state: "paused", reason });
    return readSchedule(client, name, owner);
  });
}

/** Resumes a paused schedule from the next due time after now (what fell due while paused is not started); audited. */
export async function resumeSchedule(pool: Pool, name: string, owner: string | null, actor: string, reason: string | null = null): Promise<ScheduleView> {
  return inTransaction(pool, async (client) => {
    const row = await lockSchedule(client, name, owner);
    const next = dueTimesOf(row).next(row.db_now, row.last_due_at);
    const [resumed] = await run(client, sql.resumeSchedule, [row.id, next]);
    if (resumed) await audit(client, actor, "schedule.resumed", row, { state: row.state }, { state: "active", nextDueAt: next?.toISOString() ?? null, reason });
    return readSchedule(client, name, owner);
  });
}

/** Deletes a schedule and its firings (the requests it started stay); audited. */
export async function deleteSchedule(pool: Pool, name: string, owner: string | null, actor: string, reason: string | null = null): Promise<void> {
  await inTransaction(pool, async (client) => {
    const row = await lockSchedule(client, name, owner);
    await run(client, sql.deleteSchedule, [row.id]);
    await audit(client, actor, "schedule.deleted", row, { ...specOf(row), owner: row.owner, state: row.state }, { reason });
  });
}
