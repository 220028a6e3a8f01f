/**
 * Creating demo requests the way an app does, through POST /api/requests with one of the demo's
 * kinds (anonymous: the web server runs in demo mode). The demo workers register the kinds when
 * they start, which can be a moment after the web server answers, so an unknown kind is
 * retried for a while; any other answer is returned as it is.
 */
import { expect, type APIRequestContext, type APIResponse } from "@playwright/test";

export type DeliveryInput = { recipient: string; message: string; deliverVia?: "idempotent" | "queryable" | "opaque" };

/**
 * `options`: the request's fair share (concurrencyKey, priority), as an app sets them, and the
 * `traceparent` of the app's span it is created in.
 */
export async function createDelivery(
  request: APIRequestContext,
  input: DeliveryInput,
  idempotencyKey?: string,
  options: { concurrencyKey?: string; priority?: number; traceparent?: string } = {},
): Promise<APIResponse> {
  return createDemoRequest(request, "delivery", input, idempotencyKey, options);
}

/** A request of the demo's `kind` (lib/demo/definitions.ts) with `input`; `options.traceparent`: the app's span it is created in. */
export async function createDemoRequest(
  request: APIRequestContext,
  kind: string,
  input: unknown,
  idempotencyKey?: string,
  options: { concurrencyKey?: string; priority?: number; traceparent?: string } = {},
): Promise<APIResponse> {
  const { traceparent, ...share } = options;
  let response: APIResponse | undefined;
  await expect(async () => {
    response = await request.post("/api/requests", {
      headers: { ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}), ...(traceparent ? { traceparent } : {}) },
      data: { kind, input, ...share },
    });
    const body = response.status() === 422 ? ((await response.json()) as { code?: string }) : {};
    expect(body.code, `the demo workers have registered the ${kind} kind`).not.toBe("unknown-kind");
  }).toPass({ timeout: 30_000 });
  return response!;
}
