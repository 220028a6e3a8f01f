/**
 * The payment service: a stand-in for a real payment provider that deduplicates by
 * `Idempotency-Key`. The same key sent again gets the first charge back, marked
 * `Idempotent-Replayed: true`, and no second charge. That promise is what the adapter declares.
 * It also reserves stock (`/reservations`, deduplicated the same way) and refunds charges
 * (`/refunds`): each refund's first answer is lost on the way back (a 502 after the refund was
 * made), as a flaky gateway would; the same key sent again gets the refund back, not a second one.
 */
import http from "node:http";

export type Charge = { readonly id: string; readonly orderId: string; readonly amountCents: number };
export type Refund = { readonly id: string; readonly chargeId: string };

export type PaymentService = {
  readonly url: string;
  /** Every charge made, once each. */
  readonly charges: () => Charge[];
  /** Every refund made, once each: a charge refunded twice would appear twice. */
  readonly refunds: () => Refund[];
  readonly close: () => Promise<void>;
};

async function bodyOf(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
}

export function startPaymentService(port: number, host = "127.0.0.1"): Promise<PaymentService> {
  const byKey = new Map<string, Charge>();
  const reservations = new Map<string, { id: string; orderId: string }>();
  const refunds = new Map<string, Refund>();
  const server = http.createServer(async (request, response) => {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (request.method === "GET" && request.url === "/charges") return answer(200, [...byKey.values()]);
    if (request.method === "GET" && request.url === "/refunds") return answer(200, [...refunds.values()]);
    const key = request.headers["idempotency-key"];
    if (request.method === "POST" && (request.url === "/reservations" || request.url === "/refunds")) {
      if (typeof key !== "string" || key === "") return answer(400, { error: "Idempotency-Key is required" });
      const body = (await bodyOf(request).catch(() => null)) as { orderId?: unknown; chargeId?: unknown } | null;
      if (request.url === "/reservations") {
        if (typeof body?.orderId !== "string") return answer(422, { error: "orderId must be a string" });
        const known = reservations.get(key);
        if (known) return answer(200, known, { "idempotent-replayed": "true" });
        const reservation = { id: `rs_${reservations.size + 1}`, orderId: body.orderId };
        reservations.set(key, reservation);
        return answer(201, reservation);
      }
      if (typeof body?.chargeId !== "string") return answer(422, { error: "chargeId must be a string" });
      const known = refunds.get(key);
      if (known) return answer(200, known, { "idempotent-replayed": "true" });
      const refund = { id: `rf_${refunds.size + 1}`, chargeId: body.chargeId };
      refunds.set(key, refund);
      // The refund is made; its first answer is lost on the way back.
      return answer(502, { error: "bad gateway" });
    }
    if (request.method !== "POST" || request.url !== "/charges") return answer(404, { error: "not found" });
    if (typeof key !== "string" || key === "") return answer(400, { error: "Idempotency-Key is required" });
    const earlier = byKey.get(key);
    if (earlier) return answer(200, earlier, { "idempotent-replayed": "true" });
    let body: unknown;
    try {
      body = await bodyOf(request);
    } catch {
      return answer(400, { error: "the body is not JSON" });
    }
    const { orderId, amountCents } = (body ?? {}) as { orderId?: unknown; amountCents?: unknown };
    if (typeof orderId !== "string" || !Number.isInteger(amountCents)) return answer(422, { error: "orderId must be a string and amountCents an integer" });
    const charge: Charge = { id: `ch_${byKey.size + 1}`, orderId, amountCents: amountCents as number };
    byKey.set(key, charge);
    answer(201, charge);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address() as { port: number };
      resolve({
        url: `http://${host}:${address.port}`,
        charges: () => [...byKey.values()],
        refunds: () => [...refunds.values()],
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
