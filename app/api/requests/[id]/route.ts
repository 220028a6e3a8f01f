/**
 * GET /api/requests/{id} — a request of the calling app: its status and what its end user sees;
 * with `include=steps` (scope requests:evidence), its steps' receipts and open review cases.
 */
import { readRequestQuery, requestParams, requestWithProgressSchema, requestWithStepsSchema } from "@/lib/api/contract/public";
import { handle, json, readParams, readQuery } from "@/lib/api/http";
import { authorizeApp } from "@/lib/auth/app";
import { requesterOf } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { readRequestWithSteps } from "@/lib/requests/evidence";
import { readRequestWithProgress } from "@/lib/requests/read";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  const app = await authorizeApp(request, "requests:read");
  const { id } = await readParams(params, requestParams);
  const { include } = readQuery(request, readRequestQuery);
  if (include === "steps") {
    await authorizeApp(request, "requests:evidence");
    return json(requestWithStepsSchema, await readRequestWithSteps(pool(), id, requesterOf(app.app)));
  }
  return json(requestWithProgressSchema, await readRequestWithProgress(pool(), id, requesterOf(app.app)));
});
