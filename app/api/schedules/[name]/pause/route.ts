/** POST /api/schedules/{name}/pause — pause a schedule: nothing falls due, a queued firing is dropped; audited. */
import { scheduleChangeBody, scheduleParams, scheduleSchema } from "@/lib/api/contract/schedules";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { scheduleCaller } from "@/lib/auth/schedule-caller";
import { pool } from "@/lib/db/pool";
import { pauseSchedule } from "@/lib/schedules/manage";

export const dynamic = "force-dynamic";

export const POST = handle<{ name: string }>(async (request, { params }) => {
  const caller = await scheduleCaller(request, "manage");
  const { name } = await readParams(params, scheduleParams);
  const body = request.headers.get("content-type") ? await readJson(request, scheduleChangeBody) : undefined;
  return json(scheduleSchema, await pauseSchedule(pool(), name, caller.owner, caller.actor, body?.reason ?? null));
});
