/** POST /api/admin/worker-tokens/{id}/revoke — revoke a worker token (admins; audited). */
import { workerTokenParams, workerTokenSchema } from "@/lib/api/contract/staff";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { revokeWorkerToken } from "@/lib/auth/worker-tokens";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "worker-tokens:manage");
  const { id } = await readParams(params, workerTokenParams);
  return json(workerTokenSchema, await revokeWorkerToken(pool(), id, actorName(admin)));
});
