/**
 * The payment service: a stand-in for a real payment provider that deduplicates by
 * `Idempotency-Key`. The same key sent again gets the first charge back, marked
 * `Idempotent-Replayed: true`, and no second charge. That promise is what the adapter declares.
 */
import http from "node:http";

export type Charge = { readonly id: string; readonly orderId: string; readonly amountCents: number };

export type PaymentService = {
  readonly url: string;
  /** Every charge made, once each. */
  readonly charges: () => Charge[];
  readonly close: () => Promise<void>;
};

async function bodyOf(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
}

export function startPaymentService(port: number, host = "127.0.0.1"): Promise<PaymentService> {
  const byKey = new Map<string, Charge>();
  const server = http.createServer(async (request, response) => {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (request.method === "GET" && request.url === "/charges") return answer(200, [...byKey.values()]);
    if (request.method !== "POST" || request.url !== "/charges") return answer(404, { error: "not found" });
    const key = request.headers["idempotency-key"];
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
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
