import { expect, test, type APIRequestContext, type Page } from "./fixtures";
import { createDemoRequest } from "./requests";
import { signInAs } from "./login";

/**
 * Undoing a request as people see it, against `npm start`: the demo's `purchase` (lib/demo/
 * purchase.ts) takes a payment at the idempotent destination, then waits for the warehouse; its
 * refund goes to the opaque destination. Staff cancel a paid purchase from the request page, by
 * keyboard: its customer reads the refund under way ("Refunding your payment"), then "Cancelled —
 * payment refunded". A refund whose answer the destination dropped is unknown: it reaches the
 * support queue as an undo of the charge, and the request ends as the reviewer decides (refund
 * found: cancelled; abandoned: could not be completed, never cancelled as if undone).
 */

type Timeline = { request: { status: string }; steps: { name: string; state: string }[] };

async function timeline(request: APIRequestContext, id: string): Promise<Timeline> {
  const response = await request.get(`/api/requests/${id}/timeline`);
  expect(response.status()).toBe(200);
  return (await response.json()) as Timeline;
}

const stateOf = async (request: APIRequestContext, id: string, step: string) => (await timeline(request, id)).steps.find((s) => s.name === step)?.state ?? null;

async function faults(request: APIRequestContext, kinds: Record<string, unknown>): Promise<void> {
  const response = await request.put("/api/lab/faults", { data: { kinds } });
  expect(response.status(), await response.text()).toBe(200);
}

/** Pauses (or resumes) every live demo worker through the fault lab (SIGSTOP / SIGCONT): nothing is claimed meanwhile. */
async function workers(request: APIRequestContext, action: "pause" | "resume"): Promise<void> {
  const { sessions } = (await (await request.get("/api/workers")).json()) as { sessions: { id: string; stoppedAt: string | null; onThisHost: boolean }[] };
  const live = sessions.filter((s) => s.stoppedAt === null && s.onThisHost);
  expect(live.length).toBeGreaterThan(0);
  for (const session of live) expect((await request.post(`/api/lab/workers/${session.id}/${action}`)).status()).toBe(200);
}

/** A purchase whose payment has its receipt and that now waits for the warehouse. */
async function paidPurchase(request: APIRequestContext, tag: string): Promise<{ id: string; trackUrl: string }> {
  const created = await createDemoRequest(request, "purchase", { purchaseId: `${tag}-${Date.now()}`, amountCents: 4_200 });
  expect(created.status(), await created.text()).toBe(201);
  const { id, trackUrl } = (await created.json()) as { id: string; trackUrl: string };
  await expect.poll(() => stateOf(request, id, "dispatch"), { timeout: 60_000 }).toBe("waiting");
  expect(await stateOf(request, id, "charge")).toBe("completed");
  return { id, trackUrl };
}

/** Staff cancel from the request page with the keyboard: `c`, the reason, Tab to the confirming button, Enter. */
async function cancelFromRequestPage(page: Page, id: string, reason: string): Promise<void> {
  // The page's keys work once it is hydrated; its first poll of the timeline comes after that.
  const polled = page.waitForResponse((response) => new URL(response.url()).pathname === `/api/requests/${id}/timeline`);
  await page.goto(`/requests/${id}`);
  await expect(page.locator('li[data-step="dispatch"]')).toContainText("waiting");
  await polled;
  await page.keyboard.press("c");
  const dialog = page.getByRole("dialog", { name: "Cancel this request?" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel("Reason")).toBeFocused();
  await page.keyboard.type(reason);
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Confirm cancel" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByText("Request cancelled")).toBeVisible();
}

test.beforeEach(async ({ page, request }) => {
  await signInAs(page, "engineer");
  await signInAs(request, "engineer");
});

test.afterEach(async ({ request }) => {
  await faults(request, {});
});

test("staff cancel a paid purchase: its customer reads the refund under way, then Cancelled — payment refunded", async ({ page, newPage, request }) => {
  test.setTimeout(120_000);
  const { id, trackUrl } = await paidPurchase(request, "refund");
  const customer = await newPage();
  await customer.goto(trackUrl);
  await expect(customer.getByRole("listitem").filter({ hasText: "Paid" })).toBeVisible();

  // With the workers stopped the refund is planned and waits to run, so its words stay on the page.
  await workers(request, "pause");
  try {
    await cancelFromRequestPage(page, id, "customer changed their mind");
    await expect(page.locator('li[data-step="charge.undo"]')).toContainText("ready");
    await expect(customer.getByTestId("headline")).toContainText("Cancelling");
    await expect(customer.getByText("We're cancelling your request — refunding your payment.")).toBeVisible();
    await expect(customer.getByRole("listitem").filter({ hasText: "Refunding your payment" })).toBeVisible();
    expect((await timeline(request, id)).request.status).toBe("cancelling");
  } finally {
    await workers(request, "resume");
  }

  await expect(customer.getByTestId("headline")).toContainText("Cancelled", { timeout: 60_000 });
  await expect(customer.getByText("This request was cancelled — payment refunded.")).toBeVisible();
  await expect(customer.getByRole("listitem").filter({ hasText: "Payment refunded" })).toBeVisible();
  const ended = await timeline(request, id);
  expect(ended.request.status).toBe("cancelled");
  expect(ended.steps.find((s) => s.name === "charge.undo")?.state).toBe("completed");
});

/**
 * The refund applies at the opaque destination and its answer is dropped: nobody knows whether
 * the money went back. Returns the request, its customer's page and the support person's page
 * on the case, opened from the queue by keyboard.
 */
async function refundInReview(page: Page, newPage: () => Promise<Page>, request: APIRequestContext, tag: string) {
  const { id, trackUrl } = await paidPurchase(request, tag);
  await faults(request, { opaque: { dropResponseRate: 1 } });
  await cancelFromRequestPage(page, id, "customer cancelled before dispatch");
  await expect.poll(() => stateOf(request, id, "charge.undo"), { timeout: 60_000 }).toBe("indeterminate");
  await faults(request, {});

  const customer = await newPage();
  await customer.goto(trackUrl);
  await expect(customer.getByTestId("headline")).toContainText("needs review");
  const reference = (await customer.getByTestId("reference").textContent())!;
  // Never counted as undone while the refund is unknown.
  expect((await timeline(request, id)).request.status).toBe("cancelling");

  // The queue, searched by keyboard (`/`), lists the case as the undo of the charge.
  const support = await newPage();
  await signInAs(support, "support");
  await support.goto("/review");
  // The queue's keys work once it is hydrated: its times then read relative to now ("… · 2 Dec").
  await expect(support.locator("tbody time").first()).toContainText(" · ");
  await support.keyboard.press("/");
  await expect(support.getByLabel("Reason or customer reference")).toBeFocused();
  await support.keyboard.type(reference);
  await support.keyboard.press("Enter");
  await expect(support).toHaveURL(new RegExp(`[?&]q=${reference}`));
  const row = support.getByRole("row").filter({ hasText: reference });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("charge.undo");
  await expect(row.getByTestId("review-undoes")).toContainText("undoes charge");
  await support.keyboard.press("j");
  await expect(row.getByRole("link")).toBeFocused();
  await support.keyboard.press("Enter");
  await expect(support.getByRole("heading", { level: 1 })).toContainText(`Review: charge.undo for ${reference}`);
  await expect(support.getByTestId("review-undoes")).toContainText("It undoes charge");
  return { id, customer, support };
}

test("a refund whose answer was lost reaches the support queue as an undo; found applied, the purchase ends Cancelled", async ({ page, newPage, request }) => {
  test.setTimeout(150_000);
  const { id, customer, support } = await refundInReview(page, newPage, request, "refund-found");

  // Confirm delivered is the default choice; the note says how, and Enter on the button records it.
  await expect(support.getByRole("radio", { name: /Confirm delivered/ })).toBeChecked();
  await support.getByRole("textbox", { name: /How you confirmed it/ }).focus();
  await support.keyboard.type("The refund is in the payment service's effect audit");
  await support.keyboard.press("Tab");
  await expect(support.getByRole("button", { name: "Confirm delivered" })).toBeFocused();
  await support.keyboard.press("Enter");
  await expect(support.getByText("Confirm delivered: recorded.")).toBeVisible();

  await expect(customer.getByTestId("headline")).toContainText("Cancelled", { timeout: 60_000 });
  await expect(customer.getByText("This request was cancelled — payment refunded.")).toBeVisible();
  const ended = await timeline(request, id);
  expect(ended.request.status).toBe("cancelled");
  expect(ended.steps.find((s) => s.name === "charge.undo")?.state).toBe("completed");
});

test("a refund whose answer was lost and that support abandons ends the purchase not completed, never cancelled", async ({ page, newPage, request }) => {
  test.setTimeout(150_000);
  const { id, customer, support } = await refundInReview(page, newPage, request, "refund-abandoned");

  // Sending a refund again is possible while the request is being undone, and the page says what it risks.
  await support.getByRole("radio", { name: /Confirm not delivered/ }).focus();
  await support.keyboard.press("Space");
  await expect(support.getByRole("radio", { name: /Confirm not delivered/ })).toBeChecked();
  await expect(support.getByText("This request has ended")).toHaveCount(0);
  await expect(support.getByRole("note")).toContainText("does not deduplicate");
  await support.getByRole("radio", { name: /Abandon/ }).focus();
  await support.keyboard.press("Space");
  await expect(support.getByRole("radio", { name: /Abandon/ })).toBeChecked();
  await support.getByRole("textbox", { name: "Reason the customer sees" }).focus();
  await support.keyboard.type("We could not confirm your refund; our team will contact you.");
  await support.keyboard.press("Tab");
  await support.keyboard.type("No trace of the refund; handed to the payments team");
  await support.keyboard.press("Tab");
  await expect(support.getByRole("button", { name: "Abandon" })).toBeFocused();
  await support.keyboard.press("Enter");
  await expect(support.getByText("Abandon: recorded.")).toBeVisible();

  await expect(customer.getByTestId("headline")).toContainText("Could not be completed", { timeout: 60_000 });
  await expect(customer.getByText("We could not confirm your refund; our team will contact you.")).toBeVisible();
  await expect(customer.getByText(/payment refunded/)).toHaveCount(0);
  expect((await timeline(request, id)).request.status).toBe("failed");
});
