/**
 * verifyWebhook accepts exactly what the relay signs (Standard Webhooks v1) and refuses
 * everything else: another secret, a body changed by one byte, another id or timestamp, a
 * timestamp outside the tolerance, missing headers, and a signature of another scheme.
 */
import { describe, expect, test } from "vitest";
import { newWebhookSecret, webhookHeaders } from "@/lib/webhooks/signature";
import { verifyWebhook, WebhookVerificationError } from "./webhooks";

const secret = newWebhookSecret();
const body = JSON.stringify({ type: "request.completed", timestamp: "2026-12-01T12:00:00.000Z", data: { requestId: "r1", kind: "k", progress: null } });
const nowSeconds = 1_800_000_000;
const nowMs = nowSeconds * 1000;
const signed = webhookHeaders(secret, "evt_1", body, nowSeconds);

describe("verifyWebhook", () => {
  test("accepts what the relay signed, from a Headers object or a plain record", async () => {
    await expect(verifyWebhook(secret, new Headers(signed), body, { nowMs })).resolves.toEqual({ id: "evt_1", timestampSeconds: nowSeconds, body: JSON.parse(body) });
    await expect(verifyWebhook(secret, signed, body, { nowMs })).resolves.toMatchObject({ id: "evt_1" });
  });

  test("accepts one valid signature among several (a secret being rotated)", async () => {
    const other = webhookHeaders(newWebhookSecret(), "evt_1", body, nowSeconds)["webhook-signature"];
    await expect(verifyWebhook(secret, { ...signed, "webhook-signature": `${other} ${signed["webhook-signature"]}` }, body, { nowMs })).resolves.toMatchObject({ id: "evt_1" });
  });

  const refusals: [string, () => Promise<unknown>, RegExp][] = [
    ["another secret", () => verifyWebhook(newWebhookSecret(), signed, body, { nowMs }), /no valid v1 signature/],
    ["a body changed by one byte", () => verifyWebhook(secret, signed, body.replace("r1", "r2"), { nowMs }), /no valid v1 signature/],
    ["another event id", () => verifyWebhook(secret, { ...signed, "webhook-id": "evt_2" }, body, { nowMs }), /no valid v1 signature/],
    ["another timestamp", () => verifyWebhook(secret, { ...signed, "webhook-timestamp": String(nowSeconds + 1) }, body, { nowMs }), /no valid v1 signature/],
    ["a timestamp older than the tolerance", () => verifyWebhook(secret, signed, body, { nowMs: nowMs + 301_000 }), /more than 300 s/],
    ["a timestamp ahead by more than the tolerance", () => verifyWebhook(secret, signed, body, { nowMs: nowMs - 11_000, toleranceSeconds: 10 }), /more than 10 s/],
    ["a missing signature", () => verifyWebhook(secret, { ...signed, "webhook-signature": "" }, body, { nowMs }), /missing/],
    ["a signature of another scheme", () => verifyWebhook(secret, { ...signed, "webhook-signature": signed["webhook-signature"]!.replace("v1,", "v1a,") }, body, { nowMs }), /no valid v1 signature/],
    ["a signature that is not base64", () => verifyWebhook(secret, { ...signed, "webhook-signature": "v1,***" }, body, { nowMs }), /no valid v1 signature/],
    ["a timestamp that is not a number", () => verifyWebhook(secret, { ...signed, "webhook-timestamp": "soon" }, body, { nowMs }), /not a number/],
  ];
  for (const [label, attempt, message] of refusals) {
    test(`refuses ${label}`, async () => {
      const error = await attempt().then(() => null, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect((error as Error).message).toMatch(message);
    });
  }
});
