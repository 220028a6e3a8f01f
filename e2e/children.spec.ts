import { mkdirSync } from "node:fs";
import { expect, test } from "./fixtures";
import { startHttpWorker, type HttpWorker } from "./http-worker";
import { signInAs } from "./login";

/**
 * Child requests as people see them, against `npm start`: a worker of the adopter's own
 * (e2e/children-workflows.ts, over the HTTP worker protocol with a worker token) runs a shipment
 * that starts three `box` requests, two quick and one that waits an hour. The shipment's end user
 * reads one line counting the boxes ("Preparing 2 of 3 boxes"), never the boxes' steps; the
 * engineer's steps list shows the parent step waiting for children (2 of 3 ended), its step page
 * lists its children with how each stands, and a child's step page names the step that started
 * its request.
 */

const SCREENSHOTS = "docs/screenshots";
const HOUR = 3_600_000;


test("a shipment's end user reads one line for its boxes, and engineers see the tree on the step pages", async ({ page, playwright, baseURL }) => {
  test.setTimeout(240_000);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const admin = await playwright.request.newContext({ baseURL });
  const app = await playwright.request.newContext({ baseURL });
  await signInAs(admin, "admin");
  let running: HttpWorker | null = null;
  try {
    const workerToken = await admin.post("/api/admin/worker-tokens", { data: { workerName: "shipments" } });
    expect(workerToken.status()).toBe(201);
    const appKey = await admin.post("/api/admin/app-keys", { data: { app: "shop", scopes: ["requests:create", "requests:read"] } });
    expect(appKey.status()).toBe(201);
    const authorization = `Bearer ${((await appKey.json()) as { key: string }).key}`;
    running = startHttpWorker(baseURL!, ((await workerToken.json()) as { token: string }).token, "e2e/children-workflows.ts", "shipment");

    const items = [
      { item: "mug", napMs: 0 },
      { item: "plate", napMs: 0 },
      { item: "vase", napMs: HOUR },
    ];
    let id = "";
    // The worker registers the kinds when it starts.
    await expect(async () => {
      const created = await app.post("/api/requests", { headers: { authorization }, data: { kind: "shipment", input: { items } } });
      expect(created.status(), await created.text()).toBe(201);
      id = ((await created.json()) as { id: string }).id;
    }).toPass({ timeout: 60_000 });

    // Its end user: one line in the parent step's words, counting the boxes that have ended.
    await expect
      .poll(async () => ((await (await app.get(`/api/requests/${id}`, { headers: { authorization } })).json()) as { progress: { happening: string } }).progress.happening, {
        timeout: 60_000,
      })
      .toBe("Preparing 2 of 3 boxes.");
    const { trackUrl } = (await (await app.get(`/api/requests/${id}`, { headers: { authorization } })).json()) as { trackUrl: string };
    await page.goto(trackUrl);
    await expect(page.getByText("Preparing 2 of 3 boxes").first()).toBeVisible();
    await expect(page.getByText("Packing")).toHaveCount(0);

    // The engineer's steps list, filtered by what steps wait for: the parent step waits for
    // children, with how many have ended.
    await signInAs(page, "engineer");
    await page.goto(`/steps?waitingFor=children&workflow=${id}`);
    await expect(page.getByTestId("wait-summary")).toHaveCount(1);
    await expect(page.getByTestId("wait-summary")).toContainText("waits for children: 2 of 3 ended");

    // The engineer's step page of the parent step: its children, how each stands.
    await page.goto(`/steps?workflow=${id}`);
    await page.getByRole("link", { name: "boxes", exact: true }).click();
    await expect(page.getByTestId("adapter-contract")).toHaveText("no destination is called: the ends of the child requests it started settle it");
    await expect(page.getByText("Now: Waiting (waiting: children): its room settles it. No lease is held while it waits.")).toBeVisible();
    const tree = page.getByRole("region", { name: "Parent and children" });
    await expect(tree).toContainText("This step started 3 child requests: 2 ended, 0 without completing; a failed child fails this step");
    const rows = tree.getByRole("row");
    await expect(rows).toHaveCount(4);
    await expect(rows.nth(1)).toContainText("completed");
    await expect(rows.nth(2)).toContainText("completed");
    await expect(rows.nth(3)).toContainText("active");
    await expect(rows.nth(3)).toContainText("running");
    await page.screenshot({ path: `${SCREENSHOTS}/children-parent-step.png`, fullPage: true });

    // A child's step page names the step that started its request.
    await rows.nth(3).getByRole("link").click();
    await page.getByRole("link", { name: "wait", exact: true }).click();
    await expect(page.getByRole("region", { name: "Parent and children" })).toContainText("Its request is child 3 of 3 started by step boxes of shipment@1");

    // The request's page lists its children; cancelling it cancels the box still waiting, so no
    // wait of this spec is left for the specs after it (the metrics count every waiting step).
    await page.goto(`/requests/${id}`);
    await expect(page.getByTestId("request-children").getByRole("listitem")).toHaveCount(3);
    const cancelled = await app.post(`/api/requests/${id}/cancel`, { headers: { authorization }, data: { reason: "the spec is done" } });
    expect(cancelled.status(), await cancelled.text()).toBe(200);
    await expect
      .poll(async () => ((await (await app.get(`/api/requests/${id}`, { headers: { authorization } })).json()) as { status: string }).status)
      .toBe("cancelled");
  } finally {
    if (running) {
      running.worker.kill("SIGTERM");
      await running.exited;
    }
    await admin.dispose();
    await app.dispose();
  }
});
