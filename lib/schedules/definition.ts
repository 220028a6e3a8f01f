/**
 * What a schedule is, as its creator declares it (an admin, an app, or the adopter's code):
 * a kind and version pinned, an input fixed or given the due time, a cron expression in a named
 * time zone, and the three declared policies. Checked here, once, for every door.
 */
import type { InputIssue } from "@/lib/engine/errors";
import { cronProblem, timeZoneProblem, type DstGap } from "./times";

/** The overlap policies a schedule may declare, in the order the docs list them. */
export const OVERLAP_POLICIES = ["skip", "queue_one", "allow"] as const;
/** While the previous request runs, a due time is `skip`ped, queued (`queue_one`: at most one), or started anyway (`allow`). */
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** The catch-up policies a schedule may declare, in the order the docs list them. */
export const CATCH_UP_POLICIES = ["none", "latest", "all"] as const;
/** Due times missed while no keeper ran: none started, the `latest` one, or `all` of them up to `catchUpLimit` (the latest ones). */
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

export const MAX_CATCH_UP_LIMIT = 100;
export const SCHEDULE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
/** A due time reached at most this late is on time, not missed (catch-up `none` still starts it). */
export const ON_TIME_MS = 15_000;

/** A schedule as it is kept: what `defineSchedule` and `schedules.create` checked, with every default filled in. */
export type ScheduleSpec = {
  /** Unique; lowercase letters, digits, `.`, `_`, `-`. */
  readonly name: string;
  readonly kind: string;
  /** The version every firing starts: pinned, so a newer version registered later does not change what the schedule runs. */
  readonly version: number;
  /** The input of each request, fixed. */
  readonly input: unknown;
  /** When set, the input field that receives the due time (ISO 8601): the input computed from the due time. */
  readonly dueTimeField: string | null;
  readonly cron: string;
  readonly timeZone: string;
  readonly dstGap: DstGap;
  readonly overlap: OverlapPolicy;
  readonly catchUp: CatchUpPolicy;
  /** With catch-up `all`: the most missed due times started after a downtime, 1–100. */
  readonly catchUpLimit: number;
};

/** The problems of a spec, each naming its field; empty when it can be created (the kind is checked against the registry apart). */
export function scheduleSpecIssues(spec: ScheduleSpec): InputIssue[] {
  const issues: InputIssue[] = [];
  if (!SCHEDULE_NAME_PATTERN.test(spec.name)) issues.push({ path: "name", message: "must be 1–100 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit" });
  const cron = cronProblem(spec.cron);
  if (cron) issues.push({ path: "cron", message: cron });
  const zone = timeZoneProblem(spec.timeZone);
  if (zone) issues.push({ path: "timeZone", message: zone });
  if (!Number.isInteger(spec.catchUpLimit) || spec.catchUpLimit < 1 || spec.catchUpLimit > MAX_CATCH_UP_LIMIT) {
    issues.push({ path: "catchUpLimit", message: `must be an integer from 1 to ${MAX_CATCH_UP_LIMIT}` });
  }
  if (spec.dueTimeField !== null) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(spec.dueTimeField)) issues.push({ path: "dueTimeField", message: "must be a field name (letters, digits, '_')" });
    else if (spec.input !== undefined && spec.input !== null && (typeof spec.input !== "object" || Array.isArray(spec.input))) {
      issues.push({ path: "input", message: "must be an object when dueTimeField is set" });
    }
  }
  return issues;
}

/** The input a firing at `dueAt` starts its request with. */
export function inputAt(spec: Pick<ScheduleSpec, "input" | "dueTimeField">, dueAt: Date): unknown {
  if (spec.dueTimeField === null) return spec.input ?? null;
  return { ...((spec.input as Record<string, unknown> | null) ?? {}), [spec.dueTimeField]: dueAt.toISOString() };
}

/** The idempotency key of the request a firing starts: one per (schedule, due time). */
export const firingKey = (scheduleId: string, dueAt: Date): string => `schedule:${scheduleId}:${dueAt.toISOString()}`;
