import { mkdirSync } from "node:fs";
import { expect, test } from "./fixtures";
import { signInAs } from "./login";

/**
 * Schedules as the people who run them see them. An admin creates a schedule of the demo's
 * `delivery` kind through the API; /schedules shows it with its next 5 due times, and, as the
 * coordinators fire it, its firings with links to their requests; the admin pauses it (no due
 * times while paused), resumes it, and deletes it; an engineer sees the page without the actions.
 */
test("an admin's schedule shows its next due times and its firings with their requests; pause, resume and delete from /schedules", async ({ page, newPage, playwright, baseURL }) => {
  test.setTimeout(180_000);
  const adminApi = await playwright.request.newContext({ baseURL });
  await signInAs(adminApi, "admin");
  const name = `e2e-every-2s-${Date.now()}`;
  try {
    // The demo workers register `delivery` a moment after the web server answers.
    await expect(async () => {
      const created = await adminApi.post("/api/schedules", {
        headers: { origin: baseURL! },
        data: { name, kind: "delivery", cron: "*/2 * * * * *", timeZone: "Europe/Paris", overlap: "allow", input: { recipient: "ada@example.com", message: "Every two seconds", deliverVia: "idempotent" } },
      });
      expect(created.status(), await created.text()).toBe(201);
    }).toPass({ timeout: 60_000 });

    await signInAs(page, "admin");
    await page.goto("/schedules");
    await expect(page.getByRole("heading", { name: "Schedules", level: 1 })).toBeVisible();
    const row = page.locator(`tr[data-schedule="${name}"]`);
    await expect(row).toBeVisible();
    await expect(row.getByRole("list", { name: `Next due times of ${name}` }).getByRole("listitem")).toHaveCount(5);
    // The page polls: the coordinators' firings appear with their requests.
    const firings = row.getByRole("list", { name: `Last firings of ${name}` });
    await expect(firings.locator('li[data-firing-state="started"]').first()).toBeVisible({ timeout: 30_000 });
    await expect(firings.getByRole("link", { name: /^request / }).first()).toHaveAttribute("href", /\/steps\?workflow=[0-9a-f-]{36}$/);
    mkdirSync("docs/screenshots", { recursive: true });
    await page.screenshot({ path: "docs/screenshots/schedules.png", fullPage: true });

    await row.getByRole("button", { name: `Pause ${name}` }).click();
    await expect(page.getByRole("status")).toHaveText(`${name}: paused.`);
    await expect(row.getByText("paused", { exact: true }).first()).toBeVisible();
    await row.getByRole("button", { name: `Resume ${name}` }).click();
    await expect(page.getByRole("status")).toHaveText(`${name}: resumed.`);
    await expect(row.getByRole("list", { name: `Next due times of ${name}` }).getByRole("listitem")).toHaveCount(5);

    // Engineers read the page; only admins change schedules.
    const engineer = await newPage();
    await signInAs(engineer, "engineer");
    await engineer.goto("/schedules");
    await expect(engineer.locator(`tr[data-schedule="${name}"]`)).toBeVisible();
    await expect(engineer.getByRole("button", { name: `Pause ${name}` })).toHaveCount(0);

    page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: `Delete ${name}` }).click();
    await expect(page.getByRole("status")).toHaveText(`${name}: deleted.`);
    await expect(row).toHaveCount(0);

    const audit = (await (await adminApi.get("/api/audit")).json()) as { items: { action: string; subjectId: string }[] };
    expect(audit.items.filter((entry) => entry.subjectId === name).map((entry) => entry.action).reverse()).toEqual(["schedule.created", "schedule.paused", "schedule.resumed", "schedule.deleted"]);
  } finally {
    await adminApi.delete(`/api/schedules/${name}`, { headers: { origin: baseURL! } }).catch(() => undefined);
    await adminApi.dispose();
  }
});
