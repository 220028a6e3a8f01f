/** POST /api/admin/app-keys/{id}/revoke — revoke an app key (admins; audited). */
import { appKeyParams, appKeySchema } from "@/lib/api/contract/staff";
import { handle, json, readParams } from "@/lib/api/http";
import { revokeAppKey } from "@/lib/auth/app-keys";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "app-keys:manage");
  const { id } = await readParams(params, appKeyParams);
  return json(appKeySchema, await revokeAppKey(pool(), id, actorName(admin)));
});
