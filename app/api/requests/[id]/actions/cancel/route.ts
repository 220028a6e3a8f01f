/** POST /api/requests/{id}/actions/cancel — staff cancel a request they saw at seenVersion (audited). */
import { pageCancelBody, pageCancelResultSchema, requestPageParams } from "@/lib/api/contract/engineer/request-page";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { cancelFromPage } from "@/lib/requests/page/actions";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const staff = await authorize(request, "requests:operate");
  const { id } = await readParams(params, requestPageParams);
  const { seenVersion, reason } = await readJson(request, pageCancelBody);
  return json(pageCancelResultSchema, await cancelFromPage(pool(), id, seenVersion, reason, actorName(staff)));
});
