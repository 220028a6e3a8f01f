/** POST /api/admin/webhook-endpoints/{id}/disable — stop deliveries to an endpoint (admins; audited). */
import { webhookEndpointParams, webhookEndpointSchema } from "@/lib/api/contract/webhooks";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { disableWebhookEndpoint } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const admin = await authorize(request, "webhooks:manage");
  const { id } = await readParams(params, webhookEndpointParams);
  return json(webhookEndpointSchema, await disableWebhookEndpoint(pool(), id, actorName(admin)));
});
