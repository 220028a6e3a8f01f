/**
 * GET    /api/schedules/{name} — a schedule with its next 5 due times and last firings.
 * DELETE /api/schedules/{name} — delete it (its requests stay); audited.
 */
import { scheduleChangeBody, scheduleParams, scheduleSchema } from "@/lib/api/contract/schedules";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { scheduleCaller } from "@/lib/auth/schedule-caller";
import { pool } from "@/lib/db/pool";
import { deleteSchedule, readSchedule } from "@/lib/schedules/manage";
import { z } from "zod";

export const dynamic = "force-dynamic";

export const GET = handle<{ name: string }>(async (request, { params }) => {
  const caller = await scheduleCaller(request, "read");
  const { name } = await readParams(params, scheduleParams);
  return json(scheduleSchema, await readSchedule(pool(), name, caller.owner));
});

export const DELETE = handle<{ name: string }>(async (request, { params }) => {
  const caller = await scheduleCaller(request, "manage");
  const { name } = await readParams(params, scheduleParams);
  const body = request.headers.get("content-type") ? await readJson(request, scheduleChangeBody) : undefined;
  await deleteSchedule(pool(), name, caller.owner, caller.actor, body?.reason ?? null);
  return json(z.object({ deleted: z.literal(true) }), { deleted: true });
});
