/** POST /api/steps/{id}/revoke — an engineer revokes the current lease; recovery decides from evidence. */
import { revokeBody, revokeResultSchema, stepIdParams } from "@/lib/api/contract/engineer";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { refuseCrossSite } from "@/lib/lab/demo";
import { revokeStepLease } from "@/lib/steps/revoke";

export const dynamic = "force-dynamic";

/** Who revoked, for the record. Staff sign-in does not exist yet; every revoke comes from the engineer view. */
const ACTOR = "engineer (web)";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  refuseCrossSite(request);
  const { id } = await readParams(params, stepIdParams);
  const { reason } = await readJson(request, revokeBody);
  return json(revokeResultSchema, await revokeStepLease(pool(), id, reason, ACTOR));
});
