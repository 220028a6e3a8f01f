import { expect, test } from "./fixtures";
import { createDelivery } from "./requests";
import { signInAs } from "./login";

// A delivery through the opaque destination loses its answer, so nobody knows whether it went
// through: the end user sees "Delivery status needs review" and the case lands in the support
// queue. A support person confirms it delivered with the destination's reference; a colleague
// who had the case open is told inline who resolved it; the end user then sees Completed.

test.beforeEach(async ({ page, request }) => {
  await signInAs(page, "support");
  // The fault lab is the engineers'.
  await signInAs(request, "engineer");
});

test.afterEach(async ({ request }) => {
  await request.put("/api/lab/faults", { data: {} });
});

test("support settles a delivery whose answer was lost, and the end user sees Completed", async ({ page, newPage, request }) => {
  const faults = await request.put("/api/lab/faults", { data: { kinds: { opaque: { dropResponseRate: 1 } } } });
  expect(faults.status()).toBe(200);

  const created = await createDelivery(request, { recipient: "grace@example.test", message: "Keys under the mat", deliverVia: "opaque" });
  expect(created.status()).toBe(201);
  const { trackUrl } = (await created.json()) as { trackUrl: string };

  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(trackUrl);
  await expect(page.getByTestId("headline")).toContainText("Delivery status needs review", { timeout: 45_000 });
  await request.put("/api/lab/faults", { data: {} });
  const reference = (await page.getByTestId("reference").textContent())!;

  // The queue, filtered by the customer's reference through the URL.
  await page.goto("/review");
  await page.getByLabel("Reason or customer reference").fill(reference);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(new RegExp(`[?&]q=${reference}`));
  const row = page.getByRole("row").filter({ hasText: reference });
  await expect(row).toHaveCount(1);
  await row.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(reference);
  await expect(page.getByRole("heading", { name: "What the customer sees" })).toBeVisible();
  await expect(page.getByText("Delivery status needs review —")).toBeVisible();
  const caseUrl = page.url();

  await page.screenshot({ path: "docs/screenshots/review-case.png", fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.reload();
  await page.screenshot({ path: "docs/screenshots/review-case-dark.png", fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });

  // A colleague opens the same case before it is resolved.
  const colleague = await newPage();
  await signInAs(colleague, "support");
  await colleague.goto(caseUrl);

  await page.getByRole("radio", { name: /Confirm delivered/ }).check();
  await page.getByRole("textbox", { name: "External reference" }).fill("opq-manual-0042");
  await page.getByRole("textbox", { name: /How you confirmed it/ }).fill("Found in the destination's console");
  await page.getByRole("button", { name: "Confirm delivered" }).click();
  await expect(page.getByText("Confirm delivered: recorded.")).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "by support" })).toContainText("opq-manual-0042");

  await colleague.getByRole("radio", { name: /Confirm not delivered/ }).check();
  await colleague.getByRole("textbox", { name: "Why (recorded on the case)" }).fill("Not in their console");
  await colleague.getByRole("button", { name: "Confirm not delivered" }).click();
  await expect(colleague.getByRole("alert").filter({ hasText: "Already resolved by" })).toContainText("support");
  await colleague.close();

  await page.goto(trackUrl);
  await expect(page.getByTestId("headline")).toContainText("Completed", { timeout: 45_000 });
});

test("the queue explains itself when nothing matches", async ({ page }) => {
  await page.goto("/review?q=no-such-reason-anywhere");
  await expect(page.getByText("No cases match these filters.")).toBeVisible();
  await expect(page.getByRole("link", { name: "Clear filters" })).toBeVisible();
});
