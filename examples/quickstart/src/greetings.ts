/**
 * The greeting card service: a stand-in for a real API (a payment provider, a mailer) that
 * deduplicates by `Idempotency-Key`. The same key sent again gets the first answer back, marked
 * `Idempotent-Replayed: true`, and no second card. That promise is what the adapter declares.
 */
import http from "node:http";

export type Card = { readonly id: string; readonly to: string; readonly text: string };

export type GreetingService = {
  readonly url: string;
  /** Every card sent, once each. */
  readonly cards: () => Card[];
  readonly close: () => Promise<void>;
};

async function bodyOf(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
}

export function startGreetingService(port: number, host = "127.0.0.1"): Promise<GreetingService> {
  const byKey = new Map<string, Card>();
  const server = http.createServer(async (request, response) => {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (request.method === "GET" && request.url === "/cards") return answer(200, [...byKey.values()]);
    if (request.method !== "POST" || request.url !== "/cards") return answer(404, { error: "not found" });
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
    const { to, text } = (body ?? {}) as { to?: unknown; text?: unknown };
    if (typeof to !== "string" || typeof text !== "string") return answer(422, { error: "to and text must be strings" });
    const card: Card = { id: `card_${byKey.size + 1}`, to, text };
    byKey.set(key, card);
    answer(201, card);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address() as { port: number };
      resolve({
        url: `http://${host}:${address.port}`,
        cards: () => [...byKey.values()],
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
