/**
 * GET  /api/schedules — schedules with their next due times and last firings (engineers and
 *      admins: all; an app key with schedules:manage: the app's own).
 * POST /api/schedules — create a schedule (admins; an app key with schedules:manage); audited;
 *      the same definition under the same name again is the same schedule (200).
 */
import { createScheduleBody, listSchedulesQuery, schedulePageSchema, scheduleSchema } from "@/lib/api/contract/schedules";
import { handle, json, readJson, readQuery } from "@/lib/api/http";
import { scheduleCaller } from "@/lib/auth/schedule-caller";
import { pool } from "@/lib/db/pool";
import { createSchedule, listSchedules } from "@/lib/schedules/manage";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  const caller = await scheduleCaller(request, "read");
  const { after, limit } = readQuery(request, listSchedulesQuery);
  const items = await listSchedules(pool(), caller.owner, { after: after ?? null, limit: limit + 1 });
  const page = items.slice(0, limit);
  return json(schedulePageSchema, { items: page, nextCursor: items.length > limit ? page.at(-1)!.name : null });
});

export const POST = handle(async (request) => {
  const caller = await scheduleCaller(request, "manage");
  const body = await readJson(request, createScheduleBody);
  const outcome = await createSchedule(
    pool(),
    { ...body, version: body.version ?? null, input: body.input ?? null, dueTimeField: body.dueTimeField ?? null },
    caller.createAs,
    caller.actor,
  );
  return json(scheduleSchema, outcome.schedule, { status: outcome.created ? 201 : 200, headers: { location: `/api/schedules/${outcome.schedule.name}` } });
});
