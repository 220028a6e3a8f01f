/**
 * Creating demo requests the way an app does, through POST /api/requests with the `delivery`
 * kind (anonymous: the web server runs in demo mode). The demo workers register the kind when
 * they start, which can be a moment after the web server answers, so an unknown kind is
 * retried for a while; any other answer is returned as it is.
 */
import { expect, type APIRequestContext, type APIResponse } from "@playwright/test";

export type DeliveryInput = { recipient: string; message: string; deliverVia?: "idempotent" | "queryable" | "opaque" };

/** `options`: the request's fair share (concurrencyKey, priority), as an app sets them. */
export async function createDelivery(
  request: APIRequestContext,
  input: DeliveryInput,
  idempotencyKey?: string,
  options: { concurrencyKey?: string; priority?: number } = {},
): Promise<APIResponse> {
  let response: APIResponse | undefined;
  await expect(async () => {
    response = await request.post("/api/requests", {
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
      data: { kind: "delivery", input, ...options },
    });
    const body = response.status() === 422 ? ((await response.json()) as { code?: string }) : {};
    expect(body.code, "the demo workers have registered the delivery kind").not.toBe("unknown-kind");
  }).toPass({ timeout: 30_000 });
  return response!;
}
