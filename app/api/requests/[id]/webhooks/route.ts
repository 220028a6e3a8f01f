/** GET /api/requests/{id}/webhooks — the webhook events a request produced and their deliveries (read on demand). */
import { requestPageParams, requestWebhooksSchema } from "@/lib/api/contract/engineer/request-page";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { readRequestWebhooks } from "@/lib/requests/page/read";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  await authorize(request, "technical:read");
  const { id } = await readParams(params, requestPageParams);
  return json(requestWebhooksSchema, { items: await readRequestWebhooks(readPool(), id) });
});
