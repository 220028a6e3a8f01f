/** PUT /api/admin/accounts/{id}/roles — replace an account's roles (admins; audited). */
import { accountParams, setRolesBody } from "@/lib/api/contract/staff";
import { handle, readJson, readParams } from "@/lib/api/http";
import { setRoles } from "@/lib/auth/accounts";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const PUT = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "accounts:manage");
  const { id } = await readParams(params, accountParams);
  const { roles } = await readJson(request, setRolesBody);
  await setRoles(pool(), id, roles, actorName(admin));
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
});
