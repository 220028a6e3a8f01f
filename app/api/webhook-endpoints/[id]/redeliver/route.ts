/** POST /api/webhook-endpoints/{id}/redeliver — send dead-lettered deliveries again, one or all (engineers; audited). */
import { redeliverBody, redeliverResultSchema, webhookEndpointParams } from "@/lib/api/contract/webhooks";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { redeliverWebhooks } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const staff = await authorize(request, "webhooks:redeliver");
  const { id } = await readParams(params, webhookEndpointParams);
  const { deliveryId } = await readJson(request, redeliverBody);
  return json(redeliverResultSchema, await redeliverWebhooks(pool(), id, deliveryId, actorName(staff)));
});
