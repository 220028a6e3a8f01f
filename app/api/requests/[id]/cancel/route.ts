/** POST /api/requests/{id}/cancel — cancel a request of the calling app. */
import { cancelRequestBody, requestParams, cancelledRequestSchema } from "@/lib/api/contract/public";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorizeApp } from "@/lib/auth/app";
import { requesterOf } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { cancelRequest } from "@/lib/requests/read";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const app = await authorizeApp(request, "requests:create");
  const { id } = await readParams(params, requestParams);
  const { reason } = await readJson(request, cancelRequestBody);
  return json(cancelledRequestSchema, await cancelRequest(pool(), id, requesterOf(app.app), reason ?? `cancelled by ${app.app}`));
});
