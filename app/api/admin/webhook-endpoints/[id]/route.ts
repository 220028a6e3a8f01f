/** DELETE /api/admin/webhook-endpoints/{id} — delete an endpoint and its deliveries (admins; audited). */
import { webhookEndpointParams } from "@/lib/api/contract/webhooks";
import { handle, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { deleteWebhookEndpoint } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export const DELETE = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "webhooks:manage");
  const { id } = await readParams(params, webhookEndpointParams);
  await deleteWebhookEndpoint(pool(), id, actorName(admin));
  return new Response(null, { status: 204 });
});
