/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` and
 * base64 key bytes; the signature is `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
 * fenceline/client's verifyWebhook checks the same thing with WebCrypto.
 */
import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

export const newWebhookSecret = (): string => PREFIX + randomBytes(24).toString("base64");

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The three headers of one delivery of event `id`, signed now. */
export function webhookHeaders(secret: string, id: string, body: string, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(nowSeconds),
    "webhook-signature": signWebhook(secret, id, nowSeconds, body),
  };
}
