import { expect, test, type Page } from "./fixtures";
import { createDelivery } from "./requests";

// An end user creates a request through the API and follows its tracking link to Completed.
// The page they see never contains an engine word, and an unknown link is the app's ordinary
// not-found page.

const ENGINE_WORDS = ["lease", "fencing", "attempt", "worker", "adapter", "receipt", "idempotency"];

/** The rendered page without its framework scripts: what the end user can read or inspect. */
async function renderedHtml(page: Page): Promise<string> {
  return page.evaluate(() => {
    const clone = document.documentElement.cloneNode(true) as HTMLElement;
    clone.querySelectorAll("script, link, style").forEach((node) => node.remove());
    return clone.outerHTML;
  });
}

test("an end user follows their request to Completed, and no engine word reaches them", async ({ page, request }) => {
  const created = await createDelivery(request, { recipient: "ada@example.test", message: "Your parcel is on its way", deliverVia: "idempotent" }, `e2e-track-${Date.now()}`);
  expect(created.status()).toBe(201);
  const { trackUrl, trackingToken } = (await created.json()) as { trackUrl: string; trackingToken: string };
  expect(trackUrl).toBe(`/track/${trackingToken}`);

  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(trackUrl);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Delivery to ada@example.test");
  await expect(page.getByTestId("headline")).toContainText("Completed", { timeout: 45_000 });
  await expect(page.getByRole("listitem").filter({ hasText: "Confirmation sent" })).toBeVisible();
  await expect(page.getByText(/this page refreshes itself/)).toHaveCount(0);

  const html = (await renderedHtml(page)).toLowerCase();
  for (const word of ENGINE_WORDS) expect(html, `the page mentions "${word}"`).not.toContain(word);
  const api = (await (await request.get(`/api/track/${trackingToken}`)).text()).toLowerCase();
  for (const word of ENGINE_WORDS) expect(api, `the API mentions "${word}"`).not.toContain(word);

  await page.screenshot({ path: "docs/screenshots/track.png", fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.reload();
  await expect(page.getByTestId("headline")).toContainText("Completed");
  await page.screenshot({ path: "docs/screenshots/track-dark.png", fullPage: true });
});

test("the reference can be copied with the keyboard", async ({ page, request, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const created = await createDelivery(request, { recipient: "lin@example.test", message: "hi" });
  const { trackUrl } = (await created.json()) as { trackUrl: string };
  await page.goto(trackUrl);
  const reference = (await page.getByTestId("reference").textContent())!;
  expect(reference).toMatch(/^FL-[0-9A-F]{4}-[0-9A-F]{4}$/);
  await page.getByRole("button", { name: "Copy reference" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByText(`Reference ${reference} copied`)).toBeVisible();
});

test("an unknown tracking link is the same not-found page as any other", async ({ page }) => {
  const unknown = await page.goto(`/track/${"A".repeat(32)}`);
  expect(unknown?.status()).toBe(404);
  const unknownText = await page.locator("body").innerText();
  expect(unknownText).toContain("Page not found");
  // A link cut short or mangled in transit cannot be decoded: still the same page, never an error.
  for (const path of ["/no-such-page", "/track/abc%2", "/track/%zz", "/track/%ED%A0%80"]) {
    const other = await page.goto(path);
    expect(other?.status(), path).toBe(404);
    expect(await page.locator("body").innerText(), path).toBe(unknownText);
  }
});
