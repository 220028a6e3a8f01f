/**
 * A webhook receiver on loopback for tests: verifies every delivery with fenceline/client's
 * verifyWebhook, records each (event id, when), and answers as the test tells it to — 200, a
 * status, slowly, never, or not at all (stopped). Test support only.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "@/lib/client/webhooks";
import type { WebhookBody } from "./events";

export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> } | "hang";
export type Received = { id: string; body: WebhookBody; atMs: number; verified: boolean };

export class TestReceiver {
  readonly received: Received[] = [];
  /** Decides the answer to each delivery; `seen` counts earlier deliveries of the same id. */
  answer: (id: string, seen: number) => Answer = () => ({ status: 200 });
  secret = "";
  private server: http.Server | null = null;
  private readonly hanging = new Set<http.ServerResponse>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(port = 0): Promise<void> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => void this.handle(request, Buffer.concat(chunks).toString("utf8"), response));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async handle(request: http.IncomingMessage, raw: string, response: http.ServerResponse): Promise<void> {
    const atMs = Date.now();
    const verified = await verifyWebhook<WebhookBody>(this.secret, request.headers as Record<string, string>, raw).then(() => true, () => false);
    const id = String(request.headers["webhook-id"]);
    const seen = this.received.filter((entry) => entry.id === id).length;
    this.received.push({ id, body: JSON.parse(raw) as WebhookBody, atMs, verified });
    const answer = this.answer(id, seen);
    if (answer === "hang") {
      this.hanging.add(response);
      return;
    }
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (!response.destroyed) response.writeHead(answer.status, answer.headers).end();
  }

  /** Ids seen, once each: what a receiver that drops repeats by webhook-id keeps. */
  deduped(): Set<string> {
    return new Set(this.received.filter((entry) => entry.verified).map((entry) => entry.id));
  }

  /** Stops listening and drops every connection, as a receiver that goes down does. */
  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
