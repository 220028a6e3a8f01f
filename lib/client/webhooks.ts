/**
 * Verifying a webhook from Fenceline in the app's receiver. WebCrypto only, so it runs in Node
 * 20+, edge runtimes and browsers alike; no server code.
 */

/** The webhook's signature, timestamp or headers did not check out: answer 400 and drop it. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** Options of {@link verifyWebhook}. */
export type VerifyWebhookOptions = {
  /** How far `webhook-timestamp` may be from now, either way (default 300 s): replays older than that are refused. */
  readonly toleranceSeconds?: number;
  /** Now, in ms since the epoch (default `Date.now()`): for tests. */
  readonly nowMs?: number;
};

/** What a verified webhook says: `id` is the event id, the key to drop duplicates by. */
export type VerifiedWebhook<Body = unknown> = { readonly id: string; readonly timestampSeconds: number; readonly body: Body };

type HeaderSource = Headers | Readonly<Record<string, string | string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/**
 * Checks a webhook Fenceline sent: its `webhook-signature` (Standard Webhooks `v1`, HMAC-SHA256
 * of `id.timestamp.body` with the endpoint's `whsec_…` secret) and that `webhook-timestamp` is
 * within `toleranceSeconds` of now. Pass the raw body exactly as received, before any JSON
 * parsing. Resolves to the event id, timestamp and parsed body; rejects with
 * {@link WebhookVerificationError} otherwise. Deliveries are at least once: keep the ids you have
 * handled and drop a repeat.
 *
 * @example
 * const event = await verifyWebhook(process.env.FENCELINE_WEBHOOK_SECRET!, request.headers, await request.text());
 */
export async function verifyWebhook<Body = unknown>(secret: string, headers: HeaderSource, body: string, options: VerifyWebhookOptions = {}): Promise<VerifiedWebhook<Body>> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");
  const timestampSeconds = Number(timestamp);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs((options.nowMs ?? Date.now()) / 1000 - timestampSeconds) > tolerance) throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s from now`);

  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64ToBytes(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  } catch {
    throw new WebhookVerificationError("the secret is not a whsec_ secret");
  }
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  // Several space-separated signatures may be sent while a secret is rotated; one valid is enough.
  for (const candidate of signatures.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || !value) continue;
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = base64ToBytes(value);
    } catch {
      continue;
    }
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", cryptoKey, signature, signed)) {
      let parsed: Body;
      try {
        parsed = JSON.parse(body) as Body;
      } catch {
        throw new WebhookVerificationError("the body is not JSON");
      }
      return { id, timestampSeconds, body: parsed };
    }
  }
  throw new WebhookVerificationError("no valid v1 signature");
}
