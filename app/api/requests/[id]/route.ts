/** GET /api/requests/{id} — a request of the calling app: its status and what its end user sees. */
import { requestParams, requestWithProgressSchema } from "@/lib/api/contract/public";
import { handle, json, readParams } from "@/lib/api/http";
import { authorizeApp } from "@/lib/auth/app";
import { requesterOf } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { readRequestWithProgress } from "@/lib/requests/read";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  const app = await authorizeApp(request, "requests:read");
  const { id } = await readParams(params, requestParams);
  return json(requestWithProgressSchema, await readRequestWithProgress(pool(), id, requesterOf(app.app)));
});
