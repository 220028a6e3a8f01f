/** GET/POST /api/admin/webhook-endpoints — webhook endpoints (admins); a new endpoint's secret is shown once. */
import { registeredWebhookEndpointSchema, registerWebhookEndpointBody, webhookEndpointListSchema } from "@/lib/api/contract/webhooks";
import { handle, json, readJson } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { listWebhookEndpoints, registerWebhookEndpoint } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "webhooks:manage");
  return json(webhookEndpointListSchema, { items: await listWebhookEndpoints(pool()) });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "webhooks:manage");
  const body = await readJson(request, registerWebhookEndpointBody);
  return json(registeredWebhookEndpointSchema, await registerWebhookEndpoint(pool(), body, actorName(admin)), { status: 201 });
});
