import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../lib/client/webhooks";
import { expect, test } from "./fixtures";
import { signInAs } from "./login";
import { createDelivery } from "./requests";

/**
 * Webhooks end to end against `npm start` and its relay: an admin registers an endpoint on /admin
 * and copies its secret; the endpoint answers 410, so the delivery fails without retries; an
 * engineer finds the failing endpoint from /workers, sees the delivery's try (410) and redelivers
 * it; the receiver, answering now, gets it again under the same webhook-id, verified.
 */

type Seen = { id: string; verified: boolean; status: number };

test("an engineer sees a failing endpoint's deliveries and redelivers", async ({ page, newPage, request }) => {
  test.setTimeout(120_000);
  const seen: Seen[] = [];
  let secret = "";
  const receiver = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", async () => {
      const verified = await verifyWebhook(secret, incoming.headers as Record<string, string>, Buffer.concat(chunks).toString("utf8")).then(() => true, () => false);
      const id = String(incoming.headers["webhook-id"]);
      const status = seen.some((entry) => entry.id === id) ? 204 : 410;
      seen.push({ id, verified, status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  try {
    await signInAs(page, "admin");
    await page.goto("/admin");
    const form = page.locator("form", { has: page.getByRole("heading", { name: "New webhook endpoint" }) });
    await form.getByLabel("URL").fill(url);
    await form.getByRole("button", { name: "Register endpoint" }).click();
    secret = (await page.getByTestId("new-webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole("link", { name: url })).toBeVisible();

    const created = await createDelivery(request, { recipient: "webhooks@example.test", message: "hello", deliverVia: "idempotent" });
    expect(created.status()).toBe(201);
    await expect.poll(() => seen.length, { timeout: 60_000 }).toBeGreaterThan(0);
    const eventId = seen[0]!.id;
    expect(seen[0]).toEqual({ id: eventId, verified: true, status: 410 });

    const engineer = await newPage();
    await signInAs(engineer, "engineer");
    await engineer.goto("/workers");
    await engineer.getByRole("link", { name: url }).click();
    const row = engineer.getByTestId("webhook-delivery").filter({ hasText: eventId });
    await expect(row).toContainText("failed (not retried)");
    await expect(row).toContainText("410");
    await row.getByRole("button", { name: `Redeliver ${eventId}` }).click();
    await expect(engineer.getByRole("status")).toHaveText("1 queued for redelivery.");
    await expect(async () => {
      await engineer.reload();
      await expect(engineer.getByTestId("webhook-delivery").filter({ hasText: eventId })).toContainText("delivered", { timeout: 1_000 });
    }).toPass({ timeout: 30_000 });
    expect(seen.filter((entry) => entry.id === eventId)).toEqual([
      { id: eventId, verified: true, status: 410 },
      { id: eventId, verified: true, status: 204 },
    ]);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
