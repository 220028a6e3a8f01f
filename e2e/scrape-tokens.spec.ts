import { expect, test } from "./fixtures";
import { signInAs } from "./login";

/**
 * An admin gives a Prometheus server its token on /admin, as they would: the token is shown
 * once, scrapes the exposition over HTTP, and is refused the moment the admin revokes it.
 */
test("an admin creates a scrape token on /admin, it scrapes, and revoking it refuses the next scrape", async ({ page, playwright, baseURL }) => {
  await signInAs(page, "admin");
  await page.goto("/admin");
  const name = `prometheus-${Date.now()}`;
  await page.getByLabel("Scraper name").fill(name);
  await page.getByRole("button", { name: "Create scrape token" }).click();
  const token = (await page.getByTestId("new-scrape-token").textContent())!;
  expect(token).toMatch(/^fl_scrape_/);
  await expect(page.getByRole("row", { name: new RegExp(name) })).toContainText("active");

  // The scraper has no cookie: its own HTTP client, with only the token.
  const scraper = await playwright.request.newContext({ baseURL, extraHTTPHeaders: { authorization: `Bearer ${token}` } });
  try {
    const scraped = await scraper.get("/api/metrics/prometheus");
    expect(scraped.status()).toBe(200);
    expect(await scraped.text()).toContain("fenceline_churn_lease_acquisitions_total");
    expect((await scraper.get("/api/metrics")).status()).toBe(401);

    await page.reload();
    await expect(page.getByRole("row", { name: new RegExp(name) })).not.toContainText("never");
    await page.getByRole("button", { name: `Revoke scrape token ${name}` }).click();
    await expect(page.getByText(`Scrape token of ${name} revoked.`)).toBeVisible();
    const refused = await scraper.get("/api/metrics/prometheus");
    expect(refused.status()).toBe(401);
    expect(refused.headers()["content-type"]).toBe("application/problem+json");
  } finally {
    await scraper.dispose();
  }
});
