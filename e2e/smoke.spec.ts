import { expect, test } from "./fixtures";

// The product starts end to end: the page renders and the API reaches the database.

test("the landing page names Fenceline", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Fenceline");
});

test("the health endpoint reports the database up", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ status: "ok", database: "up" });
});
