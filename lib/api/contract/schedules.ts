/**
 * Schedules: requests of a kind started by the clock (lib/schedules, decision 024). Admins (and
 * an app, with an app key holding `schedules:manage`, its own) create, read, pause, resume and
 * delete them; every change is audited. A cron that does not parse, a zone that does not exist,
 * an unknown kind or version and an input the kind refuses are 400s naming the field.
 */
import { z } from "zod";
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from "zod-openapi";
import { KIND_PATTERN } from "@/lib/definitions/workflow";
import { CATCH_UP_POLICIES, MAX_CATCH_UP_LIMIT, OVERLAP_POLICIES, SCHEDULE_NAME_PATTERN } from "@/lib/schedules/definition";
import type { ScheduleView } from "@/lib/schedules/types";
import { cronProblem, DST_GAP_POLICIES, timeZoneProblem } from "@/lib/schedules/times";
import { operation, timestamp } from "./common";

const refineWith = (problemOf: (value: string) => string | null) => (value: string, context: z.RefinementCtx) => {
  const problem = problemOf(value);
  if (problem) context.addIssue({ code: "custom", message: problem });
};

const scheduleName = z.string().regex(SCHEDULE_NAME_PATTERN, "1–100 lowercase letters, digits, '.', '_' or '-'");
const overlap = z.enum(OVERLAP_POLICIES).meta({ description: "While the previous request runs: skip the due time, queue one (started when it ends), or allow" });
const catchUp = z.enum(CATCH_UP_POLICIES).meta({ description: "Due times missed while no keeper ran: start none, the latest, or all (the latest catchUpLimit)" });
const dstGap = z.enum(DST_GAP_POLICIES).meta({ description: "A wall-clock time the clocks skip: due at the first instant after the gap (shift) or not at all that day (skip)" });

export const createScheduleBody = z
  .strictObject({
    name: scheduleName.meta({ description: "Unique; creating the same definition again returns the same schedule" }),
    kind: z.string().regex(KIND_PATTERN, "a workflow kind"),
    version: z.number().int().min(1).nullable().optional().meta({ description: "Pinned; the kind's highest registered version when omitted" }),
    input: z.unknown().optional().meta({ description: "Each request's input, checked against the pinned version's schema" }),
    dueTimeField: z.string().nullable().optional().meta({ description: "The input field that receives each due time (ISO 8601)" }),
    cron: z.string().max(200).superRefine(refineWith(cronProblem)).meta({ description: "5 fields (minute first) or 6 (seconds first)", example: "0 9 * * 1-5" }),
    timeZone: z.string().max(64).superRefine(refineWith(timeZoneProblem)).default("UTC").meta({ description: "An IANA time zone", example: "Europe/Paris" }),
    dstGap: dstGap.default("shift"),
    overlap: overlap.default("skip"),
    catchUp: catchUp.default("latest"),
    catchUpLimit: z.number().int().min(1).max(MAX_CATCH_UP_LIMIT).default(1),
  })
  .meta({ id: "CreateScheduleBody" });

const firingSchema = z.object({
  dueAt: timestamp,
  state: z.enum(["started", "skipped", "queued", "failed"]),
  requestId: z.uuid().nullable(),
  requestStatus: z.string().nullable(),
  reason: z.string().nullable(),
  firedAt: timestamp,
  latenessMs: z.number(),
});

export const scheduleSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    owner: z.string().meta({ description: "Whose requests it starts: app:<name>, or schedule (staff's)" }),
    kind: z.string(),
    version: z.number().int(),
    input: z.unknown(),
    dueTimeField: z.string().nullable(),
    cron: z.string(),
    timeZone: z.string(),
    dstGap,
    overlap,
    catchUp,
    catchUpLimit: z.number().int(),
    state: z.enum(["active", "paused"]),
    nextDueAt: timestamp.nullable(),
    upcoming: z.array(timestamp).meta({ description: "The next 5 due times; none while paused" }),
    lastFirings: z.array(firingSchema).meta({ description: "The last 5 firings, latest first, with their requests" }),
    missed: z.number().int().meta({ description: "Due times missed past the catch-up policy" }),
    createdBy: z.string(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "Schedule" });
const _sameView: (view: ScheduleView) => z.input<typeof scheduleSchema> = (view) => view;
void _sameView;

export const schedulePageSchema = z.object({ items: z.array(scheduleSchema), nextCursor: z.string().nullable() }).meta({ id: "SchedulePage" });
export const listSchedulesQuery = z.object({ after: scheduleName.optional(), limit: z.coerce.number().int().min(1).max(100).default(50) });
export const scheduleParams = z.object({ name: scheduleName });
export const scheduleChangeBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500).optional().meta({ description: "Why: recorded in the audit log" }) })
  .optional()
  .meta({ id: "ScheduleChangeBody" });

const appOrAdmin = (spec: Parameters<typeof operation>[0]): ZodOpenApiOperationObject => ({
  ...operation({ ...spec, tag: "schedules" }),
  security: [{ staffSession: [] }, { appKey: [] }],
});

const withCreated = (op: ZodOpenApiOperationObject): ZodOpenApiOperationObject => ({
  ...op,
  responses: { ...op.responses, "201": { description: "Created", content: { "application/json": { schema: scheduleSchema } } } },
});

export const schedulePaths: ZodOpenApiPathsObject = {
  "/api/schedules": {
    get: appOrAdmin({
      id: "listSchedules",
      summary: "Schedules by name, each with its next 5 due times and last firings (engineers and admins: all; an app key with schedules:manage: its own)",
      tag: "schedules",
      query: listSchedulesQuery,
      ok: { description: "A page of schedules", schema: schedulePageSchema },
    }),
    post: withCreated(
      appOrAdmin({
        id: "createSchedule",
        summary: "Create a schedule (admin, or an app key with schedules:manage; audited)",
        description: "Idempotent by name: the same definition again answers 200 with the same schedule; another definition under the name is 409.",
        tag: "schedules",
        body: createScheduleBody,
        ok: { description: "The schedule this name already names, with the same definition", schema: scheduleSchema },
        problems: {
          "400": "Invalid body, naming the field: a cron that does not parse (cron), a zone that does not exist (timeZone), an unknown kind (kind) or version (version), an input the kind refuses (input.…)",
          "409": "A schedule of this name exists with another definition",
        },
      }),
    ),
  },
  "/api/schedules/{name}": {
    get: appOrAdmin({
      id: "readSchedule",
      summary: "A schedule with its next 5 due times and its last firings with their requests",
      tag: "schedules",
      path: scheduleParams,
      ok: { description: "The schedule", schema: scheduleSchema },
      problems: { "404": "No schedule of that name (or not the app's)" },
    }),
    delete: appOrAdmin({
      id: "deleteSchedule",
      summary: "Delete a schedule and its firings; the requests it started stay (audited)",
      tag: "schedules",
      path: scheduleParams,
      body: scheduleChangeBody,
      ok: { description: "Deleted", schema: z.object({ deleted: z.literal(true) }) },
      problems: { "404": "No schedule of that name (or not the app's)" },
    }),
  },
  "/api/schedules/{name}/pause": {
    post: appOrAdmin({
      id: "pauseSchedule",
      summary: "Pause a schedule: nothing falls due, a queued firing is dropped (audited)",
      tag: "schedules",
      path: scheduleParams,
      body: scheduleChangeBody,
      ok: { description: "The schedule now", schema: scheduleSchema },
      problems: { "404": "No schedule of that name (or not the app's)" },
    }),
  },
  "/api/schedules/{name}/resume": {
    post: appOrAdmin({
      id: "resumeSchedule",
      summary: "Resume a schedule from its next due time after now: what fell due while paused is not started (audited)",
      tag: "schedules",
      path: scheduleParams,
      body: scheduleChangeBody,
      ok: { description: "The schedule now", schema: scheduleSchema },
      problems: { "404": "No schedule of that name (or not the app's)" },
    }),
  },
};
