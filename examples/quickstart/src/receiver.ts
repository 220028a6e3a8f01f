/**
 * `npm run receiver`: a webhook receiver for this app. It verifies each delivery with the
 * endpoint's secret, drops an event id it has already handled (delivery is at least once), and
 * logs one line per event. Register http://127.0.0.1:4300/webhooks on Fenceline's /admin and put
 * the secret it shows once in FENCELINE_WEBHOOK_SECRET.
 */
import http from "node:http";
import { verifyWebhook, WebhookVerificationError, type WebhookBody } from "fenceline/client";

const secret = process.env.FENCELINE_WEBHOOK_SECRET;
if (!secret) {
  console.error("FENCELINE_WEBHOOK_SECRET is not set: register this receiver on Fenceline's /admin and paste the secret it shows.");
  process.exit(2);
}
const port = Number(process.env.RECEIVER_PORT ?? 4300);
// A real app keeps these in its database, with the change the event causes, in one transaction.
const handled = new Set<string>();

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", async () => {
    try {
      // The raw body, exactly as received: the signature covers its bytes.
      const event = await verifyWebhook<WebhookBody>(secret, request.headers as Record<string, string>, Buffer.concat(chunks).toString("utf8"));
      if (handled.has(event.id)) {
        console.log(JSON.stringify({ duplicate: event.id }));
      } else {
        handled.add(event.id);
        const { type, data } = event.body;
        console.log(JSON.stringify({ id: event.id, type, requestId: data.requestId, kind: data.kind, review: data.review, headline: data.progress?.headline.label }));
      }
      response.writeHead(204).end();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.log(JSON.stringify({ refused: error.message }));
      response.writeHead(400).end();
    }
  });
});
server.listen(port, "127.0.0.1", () => console.log(`receiver listening on http://127.0.0.1:${port}/webhooks`));
