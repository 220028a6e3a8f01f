import AxeBuilder from "@axe-core/playwright";
import { mkdirSync } from "node:fs";
import { expect, test, type Page } from "./fixtures";
import { signInAs } from "./login";
import { createDelivery } from "./requests";

/**
 * The home page, as each audience meets it against `npm start`: signed out, the description it
 * always had; signed in, the staff overview, whose figures follow real requests run by the real
 * workers and each open the filtered list behind them; support sees the review figures only.
 * Both themes pass axe with no serious or critical violation.
 */

const SCREENSHOTS = "docs/screenshots";

async function expectAccessible(page: Page, theme: "light" | "dark"): Promise<void> {
  await page.emulateMedia({ colorScheme: theme });
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const serious = results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(serious.map((violation) => ({ id: violation.id, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5) })), theme).toEqual([]);
}

const count = async (page: Page, testId: string) => Number((await page.getByTestId(testId).locator("span").first().textContent()) ?? "NaN");

test("signed out, the home page keeps its description and shows no figure", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Fenceline");
  await expect(page.getByRole("navigation", { name: "Views" })).toBeVisible();
  await expect(page.getByTestId("figure-in-flight")).toHaveCount(0);
});

test("signed in, an engineer sees what is true now, and each figure opens the list behind it", async ({ page }) => {
  test.setTimeout(120_000);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await signInAs(page, "engineer");
  const created = await createDelivery(page.request, { recipient: "now@example.test", message: "overview", deliverVia: "idempotent" }, `e2e-overview-${Date.now()}`);
  expect(created.status()).toBe(201);
  const { id } = (await created.json()) as { id: string };
  // The workers complete it; its four steps' receipts are then in the last hour.
  await expect(async () => {
    const response = await page.request.get(`/api/requests?q=${id}`);
    expect(((await response.json()) as { items: { status: string }[] }).items[0]?.status).toBe("completed");
  }).toPass({ timeout: 60_000 });

  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Now");
  await expect(page.getByRole("navigation", { name: "Staff" })).toBeVisible();
  expect(await count(page, "figure-receipts")).toBeGreaterThanOrEqual(4);
  expect(await count(page, "figure-workers")).toBe(2);
  await expect(page.getByTestId("figure-blocked")).toContainText("None");
  await expect(page.getByTestId("figure-failing-endpoints")).toBeVisible();
  for (const headline of ["preparing", "waiting", "recovering", "needs_review"]) await expect(page.getByTestId(`figure-in-flight-${headline}`)).toBeVisible();
  // Two charts, one per family, each drawn.
  await expect(page.getByRole("heading", { name: "Lease churn" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Outcome uncertainty" })).toBeVisible();
  await expect(page.locator(".recharts-wrapper")).toHaveCount(2);
  await expect(page.locator(".recharts-line")).toHaveCount(7);
  expect(Number(await page.getByTestId("trend-lease_acquisitions").textContent())).toBeGreaterThanOrEqual(4);

  for (const theme of ["light", "dark"] as const) {
    await expectAccessible(page, theme);
    await page.screenshot({ path: `${SCREENSHOTS}/overview${theme === "dark" ? "-dark" : ""}.png`, fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });

  // The receipts figure opens the steps whose receipts it counted, our request's among them.
  const receipts = await count(page, "figure-receipts");
  await page.getByTestId("figure-receipts").click();
  await expect(page).toHaveURL(/\/steps\?receipt=true&from=.+&to=.+/);
  // The list shows a page of 50 at a time (other specs' requests are counted too): the first page,
  // and every page of the same query through the API, hold exactly the figure's steps.
  await expect(page.locator("tbody tr")).toHaveCount(Math.min(receipts, 50));
  const query = new URL(page.url()).searchParams;
  let listed = 0;
  for (let cursor: string | null = null; ; ) {
    const response = await page.request.get(`/api/steps?${new URLSearchParams([...query, ["limit", "200"], ...(cursor ? [["cursor", cursor]] : [])])}`);
    expect(response.status()).toBe(200);
    const body = (await response.json()) as { items: unknown[]; nextCursor: string | null };
    listed += body.items.length;
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  expect(listed).toBe(receipts);

  // An in-flight figure opens the requests list filtered by what their customers see.
  await page.goto("/");
  await page.getByTestId("figure-in-flight-preparing").click();
  await expect(page).toHaveURL(/\/requests\?status=active&progress=preparing/);
  await expect(page.getByLabel("Customer sees (active only)")).toHaveValue("preparing");

  await page.goto("/");
  await page.getByTestId("figure-workers").click();
  await expect(page).toHaveURL(/\/workers$/);
});

test("support sees the review figures and nothing technical", async ({ page }) => {
  await signInAs(page, "support");
  await page.goto("/");
  await expect(page.getByTestId("figure-open-reviews")).toBeVisible();
  await expect(page.getByTestId("figure-overdue-reviews")).toBeVisible();
  await expect(page.getByTestId("figure-in-flight")).toHaveCount(0);
  await expect(page.getByTestId("figure-receipts")).toHaveCount(0);
  await page.getByTestId("figure-open-reviews").click();
  await expect(page).toHaveURL(/\/review$/);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Review");
});
