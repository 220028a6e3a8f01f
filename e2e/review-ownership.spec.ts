import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext, type Page } from "./fixtures";
import { createDelivery } from "./requests";
import { DEMO_PASSWORD, demoEmail, signInAs } from "./login";

// Two deliveries through the opaque destination lose their answers and land in the review queue.
// Support walks the queue with the keyboard and opens a case, takes it; a colleague who had it
// open is told who took it and when; support hands it to that colleague, and the colleague finds
// it under "Mine". Support then resolves it anyway, after a confirmation that names the holder.

const COLLEAGUE = { email: "colleague@fenceline.test", name: "Colleague", password: `${DEMO_PASSWORD}-colleague` };

test.beforeEach(async ({ page, request }) => {
  await signInAs(page, "support");
  // The fault lab is the engineers'; accounts are the admin's.
  await signInAs(request, "engineer");
});

test.afterEach(async ({ request }) => {
  await request.put("/api/lab/faults", { data: {} });
});

const referenceOf = (id: string) => `FL-${id.replaceAll("-", "").slice(0, 4).toUpperCase()}-${id.replaceAll("-", "").slice(4, 8).toUpperCase()}`;

/** Opaque deliveries whose answers are lost: each becomes an open review case. Returns their references. */
async function casesUnderReview(page: Page, request: APIRequestContext, count: number): Promise<string[]> {
  expect((await request.put("/api/lab/faults", { data: { kinds: { opaque: { dropResponseRate: 1 } } } })).status()).toBe(200);
  const references: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const created = await createDelivery(request, { recipient: `owner${i}@example.test`, message: "Leave it at the door", deliverVia: "opaque" });
    expect(created.status()).toBe(201);
    references.push(referenceOf(((await created.json()) as { id: string }).id));
  }
  for (const reference of references) {
    await expect(async () => {
      const listed = await page.request.get(`/api/review?q=${reference}`);
      expect(((await listed.json()) as { items: unknown[] }).items).toHaveLength(1);
    }).toPass({ timeout: 60_000 });
  }
  await request.put("/api/lab/faults", { data: {} });
  return references;
}

/** axe on the page as it stands, in the light and the dark theme: no serious or critical violation. */
async function expectAccessible(page: Page, what: string): Promise<void> {
  // A toast fading in or out is measured at part opacity: judge the page once they are gone.
  await expect(page.locator("[data-sonner-toast]")).toHaveCount(0, { timeout: 15_000 });
  for (const theme of ["dark", "light"] as const) {
    // The theme follows the system's scheme live, so the page keeps its state.
    await page.emulateMedia({ colorScheme: theme });
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const serious = results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
    expect(
      serious.map((violation) => ({ id: violation.id, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5) })),
      `${what} (${theme})`,
    ).toEqual([]);
  }
}

test("support takes a case, hands it to a colleague, and resolves it anyway after naming the holder", async ({ page, newPage, request }) => {
  test.setTimeout(180_000);
  const admin = await newPage();
  await signInAs(admin, "admin");
  const account = await admin.request.post("/api/admin/accounts", { data: { ...COLLEAGUE, roles: ["support"] } });
  expect([201, 409]).toContain(account.status());
  await admin.close();

  const [first, second] = await casesUnderReview(page, request, 2);

  // The unassigned view, by keyboard: j and k move between cases, Enter opens one.
  await page.goto("/review");
  await page.getByRole("link", { name: "Unassigned" }).click();
  await expect(page).toHaveURL(/[?&]holder=unassigned/);
  await expect(page.getByRole("heading", { name: "Keyboard shortcuts" })).toBeVisible();
  const links = page.locator("tbody tr a[data-case-link]");
  await expect(links.filter({ hasText: first! })).toHaveCount(1);
  await expect(links.filter({ hasText: second! })).toHaveCount(1);
  await expectAccessible(page, "the queue");
  await page.keyboard.press("j");
  await expect(links.nth(0)).toBeFocused();
  await page.keyboard.press("j");
  await expect(links.nth(1)).toBeFocused();
  await page.keyboard.press("k");
  await expect(links.nth(0)).toBeFocused();
  await page.emulateMedia({ colorScheme: "light" });
  await page.screenshot({ path: "docs/screenshots/review-queue.png", fullPage: true });
  // Walk to the first delivery of this test, wherever earlier cases put it.
  const rows = await links.allTextContents();
  for (let i = 0; i < rows.indexOf(first!); i += 1) await page.keyboard.press("j");
  await expect(links.filter({ hasText: first! })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { level: 1 })).toContainText(first!);
  const caseUrl = page.url();
  await expect(page.getByTestId("holder")).toHaveText("Nobody holds this case yet.");

  // A colleague opens the same case, still unassigned for them.
  const colleague = await newPage();
  const signIn = await colleague.request.post("/api/session", { data: { email: COLLEAGUE.email, password: COLLEAGUE.password } });
  expect(signIn.status(), await signIn.text()).toBe(200);
  await colleague.goto(caseUrl);
  await expect(colleague.getByTestId("holder")).toHaveText("Nobody holds this case yet.");

  await page.getByRole("button", { name: "Take it", exact: true }).click();
  await expect(page.getByTestId("holder")).toContainText("Held by you for");

  // The colleague's view is now stale: taking it is refused, naming who took it.
  await colleague.getByRole("button", { name: "Take it", exact: true }).click();
  await expect(colleague.getByRole("alert").filter({ hasText: "Not changed" })).toContainText(`already taken by ${demoEmail("support")} at`);

  // Support hands it over; the colleague finds it under Mine.
  await page.getByLabel("Hand to").selectOption(COLLEAGUE.email);
  await page.getByRole("button", { name: "Hand over" }).click();
  await expect(page.getByTestId("holder")).toContainText(`Held by ${COLLEAGUE.email} for`);
  await colleague.goto("/review?holder=mine");
  await expect(colleague.locator("tbody tr").filter({ hasText: first! })).toContainText("You");
  await colleague.close();

  // Support resolves it anyway: the page says who holds it, and asks before recording.
  await expect(page.getByRole("note").filter({ hasText: "holds this case" })).toContainText(COLLEAGUE.email);
  await page.getByRole("radio", { name: /Confirm delivered/ }).check();
  await page.getByRole("textbox", { name: "External reference" }).fill("opq-manual-0077");
  await page.getByRole("button", { name: "Confirm delivered" }).click();
  const question = page.getByRole("group").filter({ hasText: "anyway" });
  await expect(question).toContainText(`${COLLEAGUE.email} holds this case. Confirm delivered anyway, instead of them?`);
  await expectAccessible(page, "the case page, asking to confirm");
  await page.getByRole("button", { name: "Yes, confirm delivered" }).click();
  await expect(page.getByText("Confirm delivered: recorded.")).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: `by ${demoEmail("support")}` })).toContainText("opq-manual-0077");

  // The queue lists the rest, overdue first; the resolved case is no longer in it.
  await page.goto("/review");
  await expect(links.filter({ hasText: first! })).toHaveCount(0);
  await expect(links.filter({ hasText: second! })).toHaveCount(1);
});
