/** GET /api/webhook-endpoints/{id}/deliveries — an endpoint's latest deliveries and their tries (engineers). */
import { webhookDeliveriesSchema, webhookEndpointParams } from "@/lib/api/contract/webhooks";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { pool } from "@/lib/db/pool";
import { webhookDeliveries } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  await authorize(request, "technical:read");
  const { id } = await readParams(params, webhookEndpointParams);
  return json(webhookDeliveriesSchema, await webhookDeliveries(pool(), id));
});
