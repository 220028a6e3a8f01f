/**
 * A schedule written next to its workflow, in the adopter's code: `defineSchedule(workflow, …)`
 * pins the workflow's kind and version and checks the cron expression, the time zone and the
 * input where it is written (a DefinitionError naming the field at start, not at the first due
 * time). `client.schedules.create(schedule)` registers it; creating it again is the same schedule.
 */
import type { CatchUpPolicy, OverlapPolicy } from "@/lib/schedules/definition";
import { scheduleSpecIssues } from "@/lib/schedules/definition";
import type { DstGap } from "@/lib/schedules/times";
import { DefinitionError } from "./errors";
import type { WorkflowDefinition, WorkflowInput } from "./workflow";

/** A schedule as the API takes it: what `client.schedules.create` sends. */
export type ScheduleOptions = {
  /** Unique: 1–100 lowercase letters, digits, `.`, `_`, `-`. Creating the same definition again returns the same schedule. */
  readonly name: string;
  readonly kind: string;
  /** Pinned: each firing starts this version. The kind's highest registered version when absent. */
  readonly version?: number;
  /** Each request's input, checked against the version's schema. */
  readonly input?: unknown;
  /** The input field that receives each due time (ISO 8601), for an input computed from the due time. */
  readonly dueTimeField?: string;
  /** 5 fields (`0 9 * * 1-5`: 09:00 on weekdays) or 6, seconds first (`*\/10 * * * * *`: every 10 seconds). */
  readonly cron: string;
  /** The IANA time zone the cron is read in. @defaultValue "UTC" */
  readonly timeZone?: string;
  /** A wall-clock time the clocks skip (spring forward): `shift` to the first instant after the gap, or `skip` that day. A time lived twice (autumn) is always due once. @defaultValue "shift" */
  readonly dstGap?: DstGap;
  /** While the previous request runs: `skip` the due time, `queue_one` (started when it ends), or `allow`. @defaultValue "skip" */
  readonly overlap?: OverlapPolicy;
  /** Due times missed while no keeper ran (downtime): start `none`, the `latest`, or `all` (the latest `catchUpLimit`). @defaultValue "latest" */
  readonly catchUp?: CatchUpPolicy;
  /** With catch-up `all`, how many missed due times at most, 1–100. @defaultValue 1 */
  readonly catchUpLimit?: number;
};

/** What {@link defineSchedule} takes besides the workflow: the input typed by the workflow's schema. */
export type ScheduleDefinitionOptions<W extends WorkflowDefinition<string, unknown, unknown, unknown>> = Omit<ScheduleOptions, "kind" | "version" | "input"> & {
  readonly input: WorkflowInput<W> | (Record<string, unknown> & Partial<WorkflowInput<W>>);
};

/**
 * Defines a schedule of `workflow` (its kind and version pinned), checked now: a cron that does
 * not parse, a zone that does not exist, or an input the workflow's schema refuses throws
 * DefinitionError naming the field.
 *
 * @example
 * ```ts
 * export const nightlyReport = defineSchedule(report, { name: "nightly-report", cron: "0 2 * * *", timeZone: "Europe/Paris", input: { scope: "all" } });
 * // at start: await fenceline.schedules.create(nightlyReport);
 * ```
 */
export function defineSchedule<W extends WorkflowDefinition<string, unknown, unknown, unknown>>(workflow: W, options: ScheduleDefinitionOptions<W>): ScheduleOptions & { readonly kind: W["kind"]; readonly version: number } {
  const schedule = { ...options, kind: workflow.kind, version: workflow.version };
  const problems = scheduleSpecIssues({
    name: schedule.name,
    kind: schedule.kind,
    version: schedule.version,
    input: schedule.input,
    dueTimeField: schedule.dueTimeField ?? null,
    cron: schedule.cron,
    timeZone: schedule.timeZone ?? "UTC",
    dstGap: schedule.dstGap ?? "shift",
    overlap: schedule.overlap ?? "skip",
    catchUp: schedule.catchUp ?? "latest",
    catchUpLimit: schedule.catchUpLimit ?? 1,
  }).map((issue) => `${issue.path}: ${issue.message}`);
  // The due time is filled in at each firing: check the input with a stand-in for it.
  const sample = schedule.dueTimeField ? { ...(schedule.input as Record<string, unknown>), [schedule.dueTimeField]: new Date(0).toISOString() } : schedule.input;
  const parsed = workflow.input.safeParse(sample);
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => `input${issue.path.length > 0 ? `.${issue.path.join(".")}` : ""}: ${issue.message}`));
  if (problems.length > 0) throw new DefinitionError(`schedule ${schedule.name}`, problems);
  return schedule;
}
