/**
 * POST /api/requests — create a request of a registered kind (app key with requests:create;
 * anonymous in demo mode). Idempotency-Key: the same key returns the same request.
 * GET  /api/requests — an app's own requests (app key with requests:read), or, for engineers
 * signed in, every request with its steps.
 */
import { appRequestPageSchema, appRequestsQuery, createRequestBody, idempotencyKeyHeader, requestSchema } from "@/lib/api/contract/public";
import { listRequestsQuery, requestPageSchema } from "@/lib/api/contract/engineer/requests";
import { handle, json, readJson, readQuery } from "@/lib/api/http";
import { authorizeApp, presentsBearer } from "@/lib/auth/app";
import { requesterOf } from "@/lib/auth/app-keys";
import { authorize } from "@/lib/auth/authorize";
import { clientKey } from "@/lib/auth/rate-limit";
import { pool } from "@/lib/db/pool";
import { readPool } from "@/lib/db/read-pool";
import { demoMode } from "@/lib/lab/demo";
import { createRequest } from "@/lib/requests/create";
import { requestCreationByApp, requestCreationByClient } from "@/lib/requests/limits";
import { listRequests } from "@/lib/requests/list";
import { listRequestsOf } from "@/lib/requests/read";

export const dynamic = "force-dynamic";

/**
 * Who creates, and the kinds they may start: the app whose key is presented (its key's kinds);
 * without one, in demo mode only, an anonymous caller.
 */
async function requesterFor(request: Request): Promise<{ requester: string; allowedKinds: readonly string[] }> {
  if (presentsBearer(request) || !demoMode()) {
    const app = await authorizeApp(request, "requests:create");
    await requestCreationByApp().take(pool(), app.keyId);
    return { requester: requesterOf(app.app), allowedKinds: app.kinds };
  }
  await requestCreationByClient.take(pool(), clientKey(request));
  return { requester: "api", allowedKinds: [] };
}

export const POST = handle(async (request) => {
  const { requester, allowedKinds } = await requesterFor(request);
  const idempotencyKey = idempotencyKeyHeader(request.headers.get("idempotency-key"));
  const body = await readJson(request, createRequestBody);
  const outcome = await createRequest(pool(), {
    kind: body.kind,
    version: body.version ?? null,
    input: body.input,
    idempotencyKey,
    requester,
    deadlineAt: body.deadline ? new Date(body.deadline) : null,
    priority: body.priority ?? null,
    concurrencyKey: body.concurrencyKey ?? null,
    allowedKinds,
    // W3C trace context: the request's spans continue the caller's trace (malformed: ignored).
    traceParent: request.headers.get("traceparent"),
  });
  return json(requestSchema, outcome.request, { status: outcome.created ? 201 : 200, headers: { location: `/api/requests/${outcome.request.id}` } });
});

export const GET = handle(async (request) => {
  if (presentsBearer(request)) {
    const app = await authorizeApp(request, "requests:read");
    return json(appRequestPageSchema, await listRequestsOf(pool(), requesterOf(app.app), readQuery(request, appRequestsQuery)));
  }
  await authorize(request, "technical:read");
  return json(requestPageSchema, await listRequests(readPool(), readQuery(request, listRequestsQuery)));
});
