/** POST /api/events/url/{token} — a third party settles a wait through its one-time URL (the body is the payload). */
import { sentEventSchema, waitUrlParams, waitUrlPayload } from "@/lib/api/contract/events";
import { idempotencyKeyHeader } from "@/lib/api/contract/public";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { clientKey } from "@/lib/auth/rate-limit";
import { pool } from "@/lib/db/pool";
import { eventSendingByClient } from "@/lib/events/limits";
import { sendThroughWaitUrl } from "@/lib/events/send";
import { z } from "zod";

export const dynamic = "force-dynamic";

export const POST = handle<{ token: string }>(async (request, { params }) => {
  await eventSendingByClient.take(pool(), clientKey(request));
  const { token } = await readParams(params, waitUrlParams);
  const idempotencyKey = idempotencyKeyHeader(request.headers.get("idempotency-key"));
  const payload = waitUrlPayload(await readJson(request, z.unknown()));
  const sent = await sendThroughWaitUrl(pool(), token, payload, idempotencyKey);
  return json(sentEventSchema, sent, { status: sent.duplicate ? 200 : 202 });
});
