/** POST /api/steps/{id}/revoke — an engineer revokes the current lease; recovery decides from evidence. */
import { revokeBody, revokeResultSchema, stepIdParams } from "@/lib/api/contract/engineer/steps";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { revokeStepLease } from "@/lib/steps/revoke";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const staff = await authorize(request, "lease:revoke");
  const { id } = await readParams(params, stepIdParams);
  const { reason } = await readJson(request, revokeBody);
  return json(revokeResultSchema, await revokeStepLease(pool(), id, reason, actorName(staff)));
});
