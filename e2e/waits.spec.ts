import { mkdirSync } from "node:fs";
import { expect, test, type APIRequestContext, type Page } from "./fixtures";
import { startHttpWorker, type HttpWorker } from "./http-worker";
import { signInAs } from "./login";

/**
 * Steps that wait, as engineers see them, against `npm start`: a worker of the adopter's own
 * (e2e/waits-workflows.ts, over the HTTP worker protocol with a worker token) runs `parcel`
 * requests that wait for the courier's event, then for a time. One parcel's event comes through
 * the API and its short timer fires; the other's comes through the one-time URL its step page
 * shows, and its timer (an hour) still waits. The step page shows what each waits for, since and
 * until when, and the events received for its key; the lists filter by "waiting for" time or an
 * event (a bad value is a clear message, or a 400 problem from the API); the metrics page and
 * Prometheus count steps waiting by kind, events by outcome and timer lateness.
 */

const SCREENSHOTS = "docs/screenshots";
const HOUR = 3_600_000;

type Created = { id: string };


async function createParcel(app: APIRequestContext, authorization: string, input: { parcelId: string; napMs: number }): Promise<string> {
  let id = "";
  // The worker registers the kind when it starts.
  await expect(async () => {
    const created = await app.post("/api/requests", { headers: { authorization }, data: { kind: "parcel", input } });
    expect(created.status(), await created.text()).toBe(201);
    id = ((await created.json()) as Created).id;
  }).toPass({ timeout: 60_000 });
  return id;
}

/** Events received and consumed so far, as the metrics page counts them (other specs send events too). */
async function eventCounts(page: Page): Promise<{ received: number; consumed: number }> {
  await page.goto("/metrics");
  const list = page.getByRole("region", { name: "Waits" }).getByRole("list", { name: "Events by outcome, in range" });
  await expect(list).toContainText("consumed:");
  const text = (await list.textContent()) ?? "";
  const count = (outcome: string) => Number(new RegExp(`${outcome}: (\\d+)`).exec(text)?.[1] ?? Number.NaN);
  return { received: count("received"), consumed: count("consumed") };
}

test("engineers see what waiting steps wait for, filter by it, and count waits on the metrics page", async ({ page, playwright, baseURL }) => {
  test.setTimeout(240_000);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const admin = await playwright.request.newContext({ baseURL });
  const engineer = await playwright.request.newContext({ baseURL });
  const app = await playwright.request.newContext({ baseURL });
  await signInAs(admin, "admin");
  await signInAs(engineer, "engineer");
  let running: HttpWorker | null = null;
  try {
    const workerToken = await admin.post("/api/admin/worker-tokens", { data: { workerName: "parcels" } });
    expect(workerToken.status()).toBe(201);
    const appKey = await admin.post("/api/admin/app-keys", { data: { app: "courier", scopes: ["requests:create", "requests:read", "events:send"] } });
    expect(appKey.status()).toBe(201);
    const authorization = `Bearer ${((await appKey.json()) as { key: string }).key}`;
    running = startHttpWorker(baseURL!, ((await workerToken.json()) as { token: string }).token, "e2e/waits-workflows.ts", "parcel");

    // Events other specs sent are in the metrics' range too: this spec's two are counted on top.
    await signInAs(page, "engineer");
    const eventsBefore = await eventCounts(page);
    const run = Date.now().toString(36);
    const quick = `parcel-${run}-quick`;
    const slow = `parcel-${run}-slow`;
    const quickId = await createParcel(app, authorization, { parcelId: quick, napMs: 1_000 });
    const slowId = await createParcel(app, authorization, { parcelId: slow, napMs: HOUR });

    // The quick parcel's courier answers through the API; its one-second timer fires and it completes.
    const sent = await app.post("/api/events", { headers: { authorization, "idempotency-key": `collected-${quick}` }, data: { name: "courier.collected", key: quick, payload: { by: "Ada" } } });
    expect(sent.status(), await sent.text()).toBe(202);
    await expect
      .poll(async () => ((await (await app.get(`/api/requests/${quickId}`, { headers: { authorization } })).json()) as { status: string }).status, { timeout: 60_000 })
      .toBe("completed");

    // The slow parcel waits for its event: the steps list, filtered to steps waiting for an event.
    await signInAs(page, "engineer");
    await page.goto(`/steps?waitingFor=event&workflow=${slowId}`);
    const row = page.getByRole("row", { name: /collected/ });
    await expect(row).toBeVisible({ timeout: 30_000 });
    await expect(row.getByTestId("wait-summary")).toContainText(`waits for event courier.collected · key ${slow}`);
    await expect(row.getByTestId("wait-summary")).toContainText("since");
    await expect(row.getByTestId("wait-summary")).toContainText("until");
    await page.goto(`/steps?waitingFor=time&workflow=${slowId}`);
    await expect(page.getByText("No step matches these filters.")).toBeVisible();

    // Its step page: what it waits for, since and until when, its one-time URL, no event yet.
    await page.goto(`/steps?workflow=${slowId}`);
    await page.getByRole("link", { name: "collected", exact: true }).click();
    const wait = page.getByRole("region", { name: "Wait" });
    await expect(wait.getByTestId("waits-for")).toHaveText(`event courier.collected · key ${slow}`);
    await expect(page.getByText(`Now: Waiting for the event courier.collected with key ${slow}, until`)).toBeVisible();
    await expect(page.getByTestId("adapter-contract")).toHaveText("no destination is called: an event for its key, or its timeout, settles the wait");
    await expect(wait.getByText("Times out (then the request fails)")).toBeVisible();
    await expect(wait.getByText(`No event received yet for courier.collected with this key.`)).toBeVisible();
    const url = (await wait.getByTestId("wait-url").textContent())!;
    expect(url).toMatch(/^\/api\/events\/url\/[A-Za-z0-9_-]{32}$/);
    await page.screenshot({ path: `${SCREENSHOTS}/waits-event-step.png`, fullPage: true });

    // A third party posts to the URL: the page shows the wait received and the event consumed by this step.
    const posted = await playwright.request.newContext({ baseURL });
    try {
      const answer = await posted.post(url, { data: { by: "Grace" } });
      expect(answer.status(), await answer.text()).toBe(202);
      expect((await posted.post(url, { data: { by: "Grace" } })).status()).toBe(410);
    } finally {
      await posted.dispose();
    }
    await expect(wait.getByText("received", { exact: true })).toBeVisible({ timeout: 30_000 });
    await expect(wait.getByTestId("wait-url")).toHaveText("none");
    const events = wait.getByRole("table", { name: /Events received for courier.collected/ });
    await expect(events.getByRole("row")).toHaveCount(2);
    await expect(events.getByRole("row").nth(1)).toContainText("consumed by this step");

    // Then it waits for a time: the requests list filtered to requests with a step waiting for time.
    await page.goto(`/requests?waitingFor=time&q=${slowId.slice(0, 13)}`);
    const request = page.getByRole("row", { name: new RegExp(slowId.slice(0, 8)) });
    await expect(request.getByTestId("wait-summary")).toContainText("waits for a time", { timeout: 30_000 });
    await page.goto(`/requests?waitingFor=event&q=${slowId.slice(0, 13)}`);
    await expect(page.getByText("No request matches these filters.")).toBeVisible();
    await page.goto(`/steps?waitingFor=time&workflow=${slowId}`);
    await page.getByRole("link", { name: "settle", exact: true }).click();
    await expect(page.getByRole("region", { name: "Wait" }).getByTestId("waits-for")).toHaveText(`a time: ${HOUR} ms after the step became ready`);
    await expect(page.getByText("Now: Waiting for a time: the timer fires")).toBeVisible();
    await page.screenshot({ path: `${SCREENSHOTS}/waits-timer-step.png`, fullPage: true });

    // A filter value that means nothing: a clear message on the page, a 400 problem from the API.
    await page.goto("/steps?waitingFor=forever");
    await expect(page.getByRole("alert").filter({ hasText: "Could not load steps" })).toContainText("the filters in the address are not valid (waitingFor:");
    for (const path of ["/api/steps?waitingFor=forever", "/api/requests?waitingFor=forever"]) {
      const refused = await engineer.get(path);
      expect(refused.status()).toBe(400);
      expect(refused.headers()["content-type"]).toBe("application/problem+json");
      expect(await refused.text()).toContain("waitingFor");
    }

    // The metrics page: steps waiting by kind, events by outcome, timer lateness; in Prometheus too.
    await page.goto("/metrics");
    const waits = page.getByRole("region", { name: "Waits" });
    await expect(waits.getByRole("list", { name: "Steps waiting, now" })).toContainText("timer: 1");
    await expect(waits.getByRole("list", { name: "Steps waiting, now" })).toContainText("event: 0");
    await expect(waits.getByRole("list", { name: "Events by outcome, in range" })).toContainText(`received: ${eventsBefore.received + 2}`);
    await expect(waits.getByRole("list", { name: "Events by outcome, in range" })).toContainText(`consumed: ${eventsBefore.consumed + 2}`);
    await expect(waits.getByRole("list", { name: "Timer lateness, over the range" })).toContainText(/max: \d+(\.\d\d)? s/);
    await waits.scrollIntoViewIfNeeded();
    await waits.screenshot({ path: `${SCREENSHOTS}/waits-metrics.png` });
    const exposition = await (await engineer.get("/api/metrics/prometheus")).text();
    expect(exposition).toContain('fenceline_waits_waiting_steps{kind="timer"} 1\n');
    expect(exposition).toContain(`fenceline_waits_events_total{outcome="consumed"} ${eventsBefore.consumed + 2}\n`);
    expect(exposition).toMatch(/^fenceline_waits_timer_lateness_seconds\{stat="max"\} \d/m);
  } finally {
    if (running) {
      running.worker.kill("SIGTERM");
      await running.exited;
    }
    await Promise.all([admin.dispose(), engineer.dispose(), app.dispose()]);
  }
});
