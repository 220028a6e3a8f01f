import { mkdirSync } from "node:fs";
import { expect, test } from "./fixtures";
import { signInAs } from "./login";
import { createDelivery } from "./requests";

/**
 * Fair share as the people who run it see it. An admin gives the `delivery` kind a limit of one
 * step in flight per concurrency key on /admin; an app floods one key; an engineer's /fair-share
 * shows that key with its steps queued behind its limit, among the keys waiting longest, while a
 * second key's request is not held behind it; and the kind's settings say who overrode them.
 */
test("an admin limits a kind per key; the engineers' fair-share page shows a flooded key queued behind its limit and the longest waiting", async ({ page, newPage, playwright, baseURL }) => {
  test.setTimeout(180_000);
  const engineerApi = await playwright.request.newContext({ baseURL });
  await signInAs(engineerApi, "engineer");
  const adminApi = await playwright.request.newContext({ baseURL });
  await signInAs(adminApi, "admin");
  try {
    // Hold the fenced destination's answers for 4 s, so a key's one admitted request stays in flight.
    expect((await engineerApi.put("/api/lab/faults", { data: { kinds: { fenced: { latency: { fixedMs: 4000 } } } } })).status()).toBe(200);

    await signInAs(page, "admin");
    await page.goto("/admin");
    const section = page.getByRole("region", { name: "Fair share per workflow kind" });
    await expect(section.getByRole("cell", { name: "delivery", exact: true })).toBeVisible({ timeout: 30_000 });
    await section.getByLabel("Kind").selectOption("delivery");
    await section.getByLabel("Limit per key (empty: none)").fill("1");
    await section.getByLabel("Between keys").selectOption("round-robin");
    await section.getByLabel("Reason").fill("e2e: one tenant at a time");
    await section.getByRole("button", { name: "Override fair share" }).click();
    await expect(section.getByText("Fair share of delivery overridden.")).toBeVisible();
    await expect(section.getByRole("row", { name: /delivery/ })).toContainText("limit 1, keys take turns");

    const tenant = `e2e-tenant-${Date.now()}`;
    const other = `e2e-other-${Date.now()}`;
    for (let n = 0; n < 4; n += 1) {
      const created = await createDelivery(engineerApi, { recipient: `ada+${n}@example.com`, message: "Flood", deliverVia: "idempotent" }, undefined, { concurrencyKey: tenant });
      expect(created.status()).toBe(201);
      expect(await created.json()).toMatchObject({ concurrencyKey: tenant, priority: 5 });
    }
    const single = await createDelivery(engineerApi, { recipient: "grace@example.com", message: "Just one", deliverVia: "idempotent" }, undefined, { concurrencyKey: other });
    expect(single.status()).toBe(201);

    const engineer = await newPage();
    await signInAs(engineer, "engineer");
    await engineer.goto("/fair-share");
    await expect(engineer.getByRole("heading", { name: "Fair share", level: 1 })).toBeVisible();
    // The flooded key: one request's step at a time, the other three requests' steps queued behind it.
    const busiest = engineer.getByRole("table", { name: "Keys with the most steps ready, queued or in flight" });
    const flooded = busiest.locator(`tr[data-key="${tenant}"]`);
    await expect(flooded).toBeVisible({ timeout: 30_000 });
    await expect(flooded.locator("td").nth(3)).toHaveText("3", { timeout: 30_000 });
    await expect(flooded.locator("td").nth(5)).toHaveText("1");
    await expect(engineer.getByRole("table", { name: "Keys whose oldest ready step has waited longest" }).locator(`tr[data-key="${tenant}"]`)).toBeVisible();
    mkdirSync("docs/screenshots", { recursive: true });
    await engineer.screenshot({ path: "docs/screenshots/fair-share.png", fullPage: true });
    // The other key's one request is not behind the flood: it is done while the flood still waits.
    const { trackingToken } = (await single.json()) as { trackingToken: string };
    await expect
      .poll(async () => ((await (await engineerApi.get(`/api/track/${trackingToken}`)).json()) as { headline: { state: string } }).headline.state, { timeout: 60_000 })
      .toBe("completed");
    await expect(flooded.locator("td").nth(3)).not.toHaveText("0");

    const settings = engineer.getByRole("table", { name: "Fair share per workflow kind, as declared and as overridden" }).locator('tr[data-kind="delivery"]');
    await expect(settings).toContainText("overridden");
    await expect(settings).toContainText("e2e: one tenant at a time");
    await expect(engineer.getByRole("heading", { name: "Destination rates" })).toBeVisible();
  } finally {
    await engineerApi.put("/api/lab/faults", { data: {} });
    await adminApi.delete("/api/admin/fair-share/delivery", { data: { reason: "e2e done" } });
    await engineerApi.dispose();
    await adminApi.dispose();
  }
});
