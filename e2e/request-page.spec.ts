import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext, type Page } from "./fixtures";
import { startHttpWorker, type HttpWorker } from "./http-worker";
import { createDelivery } from "./requests";
import { signInAs } from "./login";

/**
 * The request's page against `npm start` (two demo workers, the synthetic destination, demo
 * mode): a lost answer and its recovery read off the timeline; a failed request rerun from a
 * step, by keyboard, to Completed; a bulk cancel of a filtered set whose preview count is what
 * was cancelled; an action on a stale page refused with what changed; and a parcel's event wait
 * and timer as rows of its timeline, in their rooms' words. Axe in both themes
 * and screenshots on the way.
 */

const SCREENSHOTS = "docs/screenshots";

type Timeline = {
  version: string;
  request: { status: string };
  steps: { id: string; name: string; state: string; attempts: { fencingTerm: number; outcome: string | null }[]; recoveryDecisions: { category: string }[] }[];
};

async function timeline(request: APIRequestContext, id: string): Promise<Timeline> {
  const response = await request.get(`/api/requests/${id}/timeline`);
  expect(response.status()).toBe(200);
  return (await response.json()) as Timeline;
}

async function faults(request: APIRequestContext, kinds: Record<string, unknown>): Promise<void> {
  const response = await request.put("/api/lab/faults", { data: { kinds } });
  expect(response.status(), await response.text()).toBe(200);
}

async function create(request: APIRequestContext, deliverVia: "idempotent" | "queryable", tag: string): Promise<string> {
  const created = await createDelivery(request, { recipient: `${tag}@example.test`, message: `request page: ${tag}`, deliverVia }, `e2e-page-${tag}-${Date.now()}`);
  expect(created.status()).toBe(201);
  return ((await created.json()) as { id: string }).id;
}

/** Pauses (or resumes) every live demo worker through the fault lab, so requests wait where they are. */
async function workers(request: APIRequestContext, action: "pause" | "resume"): Promise<void> {
  const { sessions } = (await (await request.get("/api/workers")).json()) as { sessions: { id: string; stoppedAt: string | null; onThisHost: boolean }[] };
  const live = sessions.filter((s) => s.stoppedAt === null && s.onThisHost);
  expect(live.length).toBeGreaterThan(0);
  for (const session of live) expect((await request.post(`/api/lab/workers/${session.id}/${action}`)).status()).toBe(200);
}

async function accessible(page: Page, name: string): Promise<void> {
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) })), `${name} (${theme})`).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/${name}${theme === "dark" ? "-dark" : ""}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test.beforeEach(async ({ page, request }) => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await signInAs(page, "engineer");
  await signInAs(request, "engineer");
});

test.afterEach(async ({ request }) => {
  await faults(request, {});
});

test("a lost answer and its recovery, read off the timeline", async ({ page, request }) => {
  test.setTimeout(120_000);
  // The idempotent destination applies the delivery and drops the connection unanswered.
  await faults(request, { idempotent: { dropResponseRate: 1 } });
  const id = await create(request, "idempotent", "lost-answer");
  await expect
    .poll(async () => (await timeline(request, id)).steps.find((s) => s.name === "deliver")?.recoveryDecisions.length ?? 0, { timeout: 60_000, intervals: [100] })
    .toBeGreaterThan(0);
  await faults(request, {});
  await expect.poll(async () => (await timeline(request, id)).request.status, { timeout: 60_000 }).toBe("completed");

  await page.goto(`/requests/${id}`);
  const deliver = page.locator('li[data-step="deliver"]');
  // Term 1's answer was lost: its bar is not an effect; a recovery decision is marked; a later term carries the receipt.
  await expect(deliver.locator('[data-term="1"]')).not.toHaveAttribute("data-outcome", "effect");
  await expect(deliver.locator('[data-mark="d"]').first()).toBeVisible();
  await expect(deliver.locator('[data-outcome="effect"]')).toHaveCount(1);
  await deliver.getByRole("button").click();
  const panel = page.getByRole("region", { name: /^Step deliver/ });
  await expect(panel.getByRole("list", { name: "Recovery decisions" })).toContainText(/retry same key|status query/);
  await expect(panel).toContainText(/Receipt under term [2-9]/);
  await expect(page.getByRole("region", { name: "The customer sees" })).toContainText("Completed");
  await accessible(page, "request-page");

  // From the overview, by the request's id.
  await page.goto("/");
  await page.getByLabel("Request id or reference").fill(id);
  await page.getByRole("button", { name: "Open" }).click();
  await expect(page).toHaveURL(new RegExp(`/requests/${id}$`));
});

test("a failed request rerun from a step, by keyboard, reaches Completed; earlier attempts stay", async ({ page, request }) => {
  test.setTimeout(150_000);
  await faults(request, { queryable: { errorRate: 1 } });
  const id = await create(request, "queryable", "rerun");
  await expect.poll(async () => (await timeline(request, id)).request.status, { timeout: 90_000, intervals: [500] }).toBe("failed");
  await faults(request, {});
  const failed = await timeline(request, id);
  const attemptsBefore = failed.steps.find((s) => s.name === "deliver")!.attempts.length;

  await page.goto(`/requests/${id}`);
  await expect(page.getByText("ended: not polling")).toBeVisible();
  await page.locator('li[data-step="deliver"]').getByRole("button").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: /^Step deliver/ })).toBeVisible();
  await page.keyboard.press("r");
  const dialog = page.getByRole("dialog", { name: "Rerun from deliver?" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("deliver, notify get a new budget");
  await page.keyboard.type("destination fixed");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Confirm rerun" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByText(/Rerun: 2 step\(s\) rearmed/)).toBeVisible();
  // Focus lands on the step's panel heading after the action.
  await expect(page.getByRole("heading", { name: /^Step deliver/ })).toBeFocused();
  await expect(page.getByRole("heading", { level: 1 }).locator("..")).toContainText(/completed\s*ended: not polling/, { timeout: 60_000 });
  const after = await timeline(request, id);
  const deliver = after.steps.find((s) => s.name === "deliver")!;
  expect(deliver.attempts.length).toBeGreaterThan(attemptsBefore);
  expect(deliver.attempts.slice(0, attemptsBefore).every((a) => a.outcome === "failed")).toBe(true);
  await page.screenshot({ path: `${SCREENSHOTS}/request-page-rerun.png`, fullPage: true });
});

test("a bulk cancel of a filtered set cancels what its preview counted", async ({ page, request }) => {
  test.setTimeout(120_000);
  const since = new Date(Date.now() - 1_000).toISOString();
  await workers(request, "pause");
  try {
    const ids = [await create(request, "idempotent", "bulk-a"), await create(request, "idempotent", "bulk-b"), await create(request, "idempotent", "bulk-c")];
    await page.goto(`/requests?status=active&kind=delivery&createdFrom=${encodeURIComponent(since)}`);
    await page.getByText("Act on every match: cancel or rerun").click();
    await page.getByRole("button", { name: "Preview" }).click();
    await expect(page.getByTestId("bulk-preview-count")).toHaveText(/^3 requests match/);
    await page.getByRole("textbox", { name: "Reason", exact: true }).fill("customer withdrew the batch");
    await page.getByRole("button", { name: "Cancel these 3 requests" }).click();
    await expect(page.getByTestId("bulk-progress")).toContainText("3 done, 0 skipped, 0 pending — finished", { timeout: 30_000 });
    await page.screenshot({ path: `${SCREENSHOTS}/requests-bulk.png`, fullPage: true });
    for (const id of ids) expect((await timeline(request, id)).request.status).toBe("cancelled");
  } finally {
    await workers(request, "resume");
  }
});

test("an action on a stale page is refused with what changed", async ({ page, request }) => {
  test.setTimeout(120_000);
  await workers(request, "pause");
  let id: string;
  try {
    id = await create(request, "idempotent", "stale");
    // The page sees the request as it is drawn and no change after (as an operator's tab left open
    // does), then the request moves on. Its polls are refused from the start: a poll sent before
    // they were, and answered after the workers resumed, would show the page the change.
    await page.route(`**/api/requests/${id}/timeline`, (route) => route.abort());
    await page.goto(`/requests/${id}`);
    await expect(page.locator('li[data-step="prepare"]')).toContainText("ready");
  } finally {
    await workers(request, "resume");
  }
  await expect.poll(async () => (await timeline(request, id!)).steps.find((s) => s.name === "prepare")?.state, { timeout: 30_000 }).not.toBe("ready");

  await page.keyboard.press("c");
  const dialog = page.getByRole("dialog", { name: "Cancel this request?" });
  await dialog.getByLabel("Reason").fill("customer asked");
  await page.unroute(`**/api/requests/${id!}/timeline`);
  await dialog.getByRole("button", { name: "Confirm cancel" }).click();
  const alert = page.getByRole("alert").filter({ hasText: "Nothing was done." });
  await expect(alert).toContainText("Nothing was done.");
  await expect(alert).toContainText(/step prepare is now .* \(was ready\)|the request is now completed/);
  await expect(alert).toBeFocused();
  await page.screenshot({ path: `${SCREENSHOTS}/request-page-stale.png`, fullPage: true });
});

test("a request's waits are rows of its timeline: an event received, then a timer that fired", async ({ page, playwright, baseURL }) => {
  test.setTimeout(180_000);
  const admin = await playwright.request.newContext({ baseURL });
  const app = await playwright.request.newContext({ baseURL });
  await signInAs(admin, "admin");
  let running: HttpWorker | null = null;
  try {
    // A worker of the adopter's own serves `parcel` (e2e/waits-workflows.ts): packed, waits for the courier's event, then a timer.
    const workerToken = await admin.post("/api/admin/worker-tokens", { data: { workerName: "page-parcels" } });
    expect(workerToken.status()).toBe(201);
    const appKey = await admin.post("/api/admin/app-keys", { data: { app: "page-courier", scopes: ["requests:create", "requests:read", "events:send"] } });
    expect(appKey.status()).toBe(201);
    const authorization = `Bearer ${((await appKey.json()) as { key: string }).key}`;
    running = startHttpWorker(baseURL!, ((await workerToken.json()) as { token: string }).token, "e2e/waits-workflows.ts", "page-parcels");

    const parcelId = `page-parcel-${Date.now().toString(36)}`;
    let id = "";
    // The worker registers the kind when it starts.
    await expect(async () => {
      const created = await app.post("/api/requests", { headers: { authorization }, data: { kind: "parcel", input: { parcelId, napMs: 1_000 } } });
      expect(created.status(), await created.text()).toBe(201);
      id = ((await created.json()) as { id: string }).id;
    }).toPass({ timeout: 60_000 });
    const sent = await app.post("/api/events", { headers: { authorization, "idempotency-key": `collected-${parcelId}` }, data: { name: "courier.collected", key: parcelId, payload: { by: "Ada" } } });
    expect(sent.status(), await sent.text()).toBe(202);

    await expect
      .poll(async () => ((await (await app.get(`/api/requests/${id}`, { headers: { authorization } })).json()) as { status: string }).status, { timeout: 60_000 })
      .toBe("completed");

    await page.goto(`/requests/${id}`);
    const event = page.locator('li[data-wait="event"][data-wait-of="collected"]');
    await expect(event).toContainText(`for event courier.collected with key ${parcelId}, until`);
    await expect(event).toContainText("started waiting at");
    await expect(event).toContainText("; event received at");
    const timer = page.locator('li[data-wait="timer"][data-wait-of="settle"]');
    await expect(timer).toContainText(/started waiting at [\d:.]+ UTC for a timer until \d{1,2} \w+ at \d\d:\d\d UTC; fired at [\d:.]+ UTC/);
    // In order with the other rows: each wait right under the step that armed it, the event's before the timer's.
    const rows = await page.locator('ol[aria-label^="Steps on the database clock"] > li').evaluateAll((items) => items.map((li) => li.getAttribute("data-wait") ?? `step:${li.getAttribute("data-step")}`));
    expect(rows).toEqual(["step:pack", "step:collected", "event", "step:settle", "timer", "step:thank"]);
    await accessible(page, "request-page-waits");
  } finally {
    if (running) {
      running.worker.kill("SIGTERM");
      await running.exited;
    }
  }
});

/** A timeline answer of `steps` steps with `perStep` attempts each, shaped as the API answers it. */
function bigTimeline(base: Record<string, unknown> & { request: Record<string, unknown> }, steps: number, perStep: number) {
  const start = Date.parse(String(base.request.createdAt));
  const at = (ms: number) => new Date(start + ms).toISOString();
  const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
  const uuid = (kind: number, n: number) => `${hex(kind, 8)}-0000-4000-8000-${hex(n, 12)}`;
  return {
    ...base,
    version: "big",
    dbNow: at(steps * 30_000 + 60_000),
    reviewCases: [],
    steps: Array.from({ length: steps }, (_, s) => ({
      id: uuid(1, s), name: `step-${s}`, position: s, adapter: "idempotent", operation: "noop", stepClass: "pure", state: "completed", stateReason: null,
      fencingTerm: perStep, attemptsStarted: perStep, attemptBudget: perStep, requestIdentity: `big-${s}`, dependsOn: s === 0 ? [] : [uuid(1, s - 1)],
      createdAt: at(s * 30_000), completedAt: at(s * 30_000 + perStep * 3_000),
      receipt: { id: uuid(2, s), attemptId: uuid(3, s * perStep + perStep - 1), verificationMethod: "idempotent_replay", externalReference: `ext-${s}`, fencingTerm: perStep, epoch: 1, at: at(s * 30_000 + perStep * 3_000 - 400) },
      result: { text: '{"ok": true}', chars: 12, truncated: false }, wait: null,
      attempts: Array.from({ length: perStep }, (_, a) => ({
        id: uuid(3, s * perStep + a), fencingTerm: a + 1, epoch: 1, ownerSessionId: uuid(4, a % 2), mode: a === 0 ? "execute" : "retry_same_identity",
        checkpoint: a === perStep - 1 ? "receipt_committed" : "invocation_began", startedAt: at(s * 30_000 + a * 3_000),
        invocationBeganAt: at(s * 30_000 + a * 3_000 + 500), responseObservedAt: a === perStep - 1 ? at(s * 30_000 + a * 3_000 + 1_500) : null,
        observedEffect: a === perStep - 1 ? "present" : null,
        endedAt: at(s * 30_000 + a * 3_000 + 2_000), expiresAt: at(s * 30_000 + a * 3_000 + 2_000),
        outcome: a === perStep - 1 ? "effect" : "lease_lost", outcomeReason: null, endReason: a === perStep - 1 ? "receipt" : "expired", externalReference: null,
      })),
      lateObservations: [{ id: s, fencingTerm: 1, operation: "commit_receipt", externalReference: `ext-${s}`, at: at(s * 30_000 + 4_000) }],
      fencingRejections: [{ id: s, operation: "commit_receipt", presentedTerm: 1, currentTerm: 2, reason: "superseded", at: at(s * 30_000 + 4_000) }],
      recoveryDecisions: Array.from({ length: perStep - 1 }, (_, a) => ({
        id: s * perStep + a, fencingTerm: a + 1, trigger: "lease_expired", category: "retry_same_key", reason: "next attempt: retry same identity",
        checkpoint: "invocation_began", decidedAt: at(s * 30_000 + a * 3_000 + 2_100), decidedBy: "bench",
      })),
    })),
  };
}

test("the timeline of a request of 200 steps and 2,000 attempts renders in under a second", async ({ page, request }) => {
  test.setTimeout(120_000);
  await workers(request, "pause");
  try {
    const id = await create(request, "idempotent", "big");
    const base = (await timeline(request, id)) as unknown as Record<string, unknown> & { request: Record<string, unknown> };
    const body = JSON.stringify(bigTimeline(base, 200, 10));
    await page.goto(`/requests/${id}`);
    await expect(page.locator("li[data-step]")).toHaveCount(4);
    // The next poll answers the big request; the page measures from the answer's arrival to 200 rows drawn.
    await page.evaluate(() => {
      const w = window as unknown as { renderedAt?: number };
      new MutationObserver((_, observer) => {
        if (document.querySelectorAll("li[data-step]").length === 200) {
          requestAnimationFrame(() => {
            w.renderedAt = performance.now();
          });
          observer.disconnect();
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    await page.route(`**/api/requests/${id}/timeline`, (route) => route.fulfill({ status: 200, contentType: "application/json", body }));
    await expect(page.locator("li[data-step]")).toHaveCount(200, { timeout: 30_000 });
    await expect.poll(() => page.evaluate(() => (window as unknown as { renderedAt?: number }).renderedAt ?? null)).not.toBeNull();
    const renderMs = await page.evaluate(() => {
      const entries = performance.getEntriesByType("resource").filter((e) => e.name.includes("/timeline")) as PerformanceResourceTiming[];
      return (window as unknown as { renderedAt: number }).renderedAt - entries.at(-1)!.responseEnd;
    });
    await expect(page.locator("[data-outcome]")).toHaveCount(2_000);
    // Zooming in draws only what is in view.
    // Measured in the page: the click (React renders a discrete event at once) to the next frame.
    const zoomMs = await page.evaluate(async () => {
      const button = [...document.querySelectorAll("button")].find((b) => b.textContent === "Zoom in")!;
      const started = performance.now();
      button.click();
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      return performance.now() - started;
    });
    await expect(page.getByRole("toolbar").locator("output")).not.toHaveText(/^6060\.0 s/);
    console.log(`[request-page] 200 steps / 2,000 attempts: answer to drawn ${Math.round(renderMs)} ms; zoom in ${Math.round(zoomMs)} ms`);
    expect(renderMs).toBeLessThan(1_000);
    await page.screenshot({ path: `${SCREENSHOTS}/request-page-200-steps.png` });
  } finally {
    await workers(request, "resume");
  }
});
