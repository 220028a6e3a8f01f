/** POST /api/events — send an event to the requests that wait for it (app key with events:send). */
import { eventSendingByApp } from "@/lib/events/limits";
import { sendEventBody, sentEventSchema } from "@/lib/api/contract/events";
import { idempotencyKeyHeader } from "@/lib/api/contract/public";
import { handle, json, readJson } from "@/lib/api/http";
import { authorizeApp } from "@/lib/auth/app";
import { requesterOf } from "@/lib/auth/app-keys";
import { pool } from "@/lib/db/pool";
import { sendEvent } from "@/lib/events/send";

export const dynamic = "force-dynamic";

export const POST = handle(async (request) => {
  const app = await authorizeApp(request, "events:send");
  await eventSendingByApp().take(pool(), app.keyId);
  const idempotencyKey = idempotencyKeyHeader(request.headers.get("idempotency-key"));
  const body = await readJson(request, sendEventBody);
  const sent = await sendEvent(pool(), { name: body.name, key: body.key, payload: body.payload, sender: requesterOf(app.app), idempotencyKey, traceParent: request.headers.get("traceparent") });
  return json(sentEventSchema, sent, { status: sent.duplicate ? 200 : 202 });
});
