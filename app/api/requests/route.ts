/**
 * POST /api/requests — create a request (Idempotency-Key: the same key returns the same request).
 * GET  /api/requests — list requests, filtered, with keyset pagination (engineers).
 */
import { createdRequestSchema, createRequestBody, idempotencyKeyHeader } from "@/lib/api/contract/public";
import { listRequestsQuery, requestPageSchema } from "@/lib/api/contract/engineer/requests";
import { handle, json, readJson, readQuery } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { clientKey } from "@/lib/auth/rate-limit";
import { pool } from "@/lib/db/pool";
import { createRequest } from "@/lib/requests/create";
import { requestCreationByClient } from "@/lib/requests/limits";
import { listRequests } from "@/lib/requests/list";

export const dynamic = "force-dynamic";

export const POST = handle(async (request) => {
  requestCreationByClient.take(clientKey(request));
  const idempotencyKey = idempotencyKeyHeader(request.headers.get("idempotency-key"));
  const body = await readJson(request, createRequestBody);
  const outcome = await createRequest(pool(), { input: body, idempotencyKey, requester: "api" });
  return json(createdRequestSchema, outcome.request, { status: outcome.created ? 201 : 200, headers: { location: `/api/track/${outcome.request.trackingToken}` } });
});

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return json(requestPageSchema, await listRequests(pool(), readQuery(request, listRequestsQuery)));
});
