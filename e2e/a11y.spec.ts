import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "./fixtures";
import { createDelivery } from "./requests";
import { signInAs } from "./login";

// axe on every page, in both themes: no serious or critical violation. The pages with an id
// need a request of their own; it is created through the public API and followed until its
// steps exist.

type Theme = "light" | "dark";

async function createRequest(page: Page): Promise<{ trackingToken: string; id: string }> {
  const response = await createDelivery(
    page.request,
    { recipient: "a11y@example.test", message: "accessibility pass", deliverVia: "idempotent" },
    `a11y-${Date.now()}-${Math.random().toString(36).slice(2)}`,
  );
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as { trackingToken: string; id: string };
}

async function firstStepOf(page: Page, workflowId: string): Promise<string> {
  let stepId: string | undefined;
  await expect(async () => {
    const response = await page.request.get(`/api/steps?workflow=${workflowId}`);
    expect(response.status()).toBe(200);
    const body = (await response.json()) as { items: { id: string }[] };
    stepId = body.items[0]?.id;
    expect(stepId).toBeTruthy();
  }).toPass({ timeout: 15_000 });
  return stepId!;
}

async function expectAccessible(page: Page, path: string, theme: Theme): Promise<void> {
  await page.emulateMedia({ colorScheme: theme });
  await page.goto(path);
  await page.waitForLoadState("networkidle");
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const serious = results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(
    serious.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5) })),
    `${path} (${theme})`,
  ).toEqual([]);
}

test("every page passes axe in light and dark themes", async ({ page }) => {
  test.setTimeout(180_000);
  for (const theme of ["light", "dark"] as const) await expectAccessible(page, "/login", theme);
  await signInAs(page, "engineer");
  const created = await createRequest(page);
  const stepId = await firstStepOf(page, created.id);
  const paths = ["/", "/requests", `/track/${created.trackingToken}`, "/track/not-a-real-token", "/review", `/steps/${stepId}`, "/metrics", "/workers", "/audit"];
  for (const theme of ["light", "dark"] as const) {
    for (const path of paths) await expectAccessible(page, path, theme);
  }
  await signInAs(page, "admin");
  for (const theme of ["light", "dark"] as const) await expectAccessible(page, "/admin", theme);
});
