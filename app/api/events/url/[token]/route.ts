/**
 * POST /api/events/url/{token} — a third party settles a wait through its one-time URL (the body
 * is the payload). No rate limit: a URL takes one event once, and a refused post writes nothing.
 */
import { sentEventSchema, waitUrlParams, waitUrlPayload } from "@/lib/api/contract/events";
import { idempotencyKeyHeader } from "@/lib/api/contract/public";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { sendThroughWaitUrl } from "@/lib/events/send";
import { z } from "zod";

export const dynamic = "force-dynamic";

export const POST = handle<{ token: string }>(async (request, { params }) => {
  const { token } = await readParams(params, waitUrlParams);
  const idempotencyKey = idempotencyKeyHeader(request.headers.get("idempotency-key"));
  const payload = waitUrlPayload(await readJson(request, z.unknown()));
  const sent = await sendThroughWaitUrl(pool(), token, payload, idempotencyKey);
  return json(sentEventSchema, sent, { status: sent.duplicate ? 200 : 202 });
});
