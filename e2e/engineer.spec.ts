import { mkdirSync } from "node:fs";
import { expect, test, type APIRequestContext, type Page } from "./fixtures";
import { createDelivery } from "./requests";
import { signInAs } from "./login";

/**
 * The engineer's view of a lost lease, end to end against `npm start` (two real worker processes,
 * the synthetic destination, demo mode): a step is in flight at the destination when the fault
 * lab pauses the worker holding it; its lease expires on the database clock, recovery lets the
 * other worker take term 2, and when the paused worker resumes its stale write is refused. The
 * step page shows two terms, the stale one's rejection marked with the presented and current terms.
 */

const SCREENSHOTS = "docs/screenshots";

type StepDetail = {
  step: { id: string; name: string; state: string };
  leases: { fencingTerm: number; ownerSessionId: string; endReason: string | null; rejections: { presentedTerm: number; currentTerm: number | null }[] }[];
  attempts: { checkpoint: string; fencingTerm: number }[];
};

async function step(request: APIRequestContext, id: string): Promise<StepDetail> {
  const response = await request.get(`/api/steps/${id}`);
  expect(response.status()).toBe(200);
  return (await response.json()) as StepDetail;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.emulateMedia({ colorScheme: "light" });
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-dark.png`, fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });
}

test.beforeEach(async ({ page, request }) => {
  await signInAs(page, "engineer");
  await signInAs(request, "engineer");
});

test("a paused holder loses its term: the step page shows two terms and the stale term's refused write", async ({ page, request }) => {
  test.setTimeout(180_000);
  mkdirSync(SCREENSHOTS, { recursive: true });

  // The fault lab: hold every answer of the idempotent destination for 4 s (under the adapter's
  // 5 s timeout), so the delivery is in flight at the destination long enough to pause its holder.
  await page.goto("/workers");
  await expect(page.getByRole("heading", { name: "Fault lab" })).toBeVisible();
  // The app's two workers, live (a worker another spec started and stopped is listed too).
  await expect(page.locator("tr[data-session]:not([data-stopped])")).toHaveCount(2, { timeout: 30_000 });
  await page.getByLabel("Applies to").selectOption("idempotent");
  await page.getByLabel("Latency (ms)").fill("4000");
  await page.getByRole("button", { name: "Apply faults" }).click();
  await expect(page.getByText("Destination faults updated")).toBeVisible();
  const faults = (await (await request.get("/api/lab/faults")).json()) as { settings: { kinds: { idempotent?: { latency?: { fixedMs: number } } } } };
  expect(faults.settings.kinds.idempotent?.latency?.fixedMs).toBe(4000);

  const created = await createDelivery(request, { recipient: "ada@example.com", message: "The engine room report", deliverVia: "idempotent" }, `e2e-engineer-${Date.now()}`);
  expect(created.status()).toBe(201);
  const { id: workflowId } = (await created.json()) as { id: string };
  const steps = (await (await request.get(`/api/steps?workflow=${workflowId}`)).json()) as { items: { id: string; name: string }[] };
  const deliverId = steps.items.find((s) => s.name === "deliver")!.id;

  // Wait until the delivery's invocation began: the call is now held at the destination.
  await expect
    .poll(async () => (await step(request, deliverId)).attempts.at(-1)?.checkpoint, { timeout: 60_000, intervals: [100] })
    .toBe("invocation_began");
  // The term cannot change hands inside the 4 s the call is held: its lease lives 10 s.
  const holder = (await step(request, deliverId)).leases.at(-1)!.ownerSessionId;
  expect(holder).toMatch(/^[0-9a-f-]{36}$/);

  const holderRow = page.locator(`tr[data-session="${holder}"]`);
  await holderRow.getByRole("button", { name: /^Pause/ }).click();
  await expect(page.getByText(/pause: sent SIGSTOP/)).toBeVisible();
  // The retry need not wait for the destination any more.
  await page.getByRole("button", { name: "Clear all faults" }).click();

  // TTL 10 s on the database clock, then the other worker's recovery scan, then its claim: term 2.
  await expect
    .poll(async () => (await step(request, deliverId)).leases.map((l) => [l.fencingTerm, l.endReason]), { timeout: 45_000, intervals: [500] })
    .toEqual([
      [1, "expired"],
      [2, expect.anything()],
    ]);
  expect((await step(request, deliverId)).leases[1]!.ownerSessionId).not.toBe(holder);

  await holderRow.getByRole("button", { name: /^Resume/ }).click();
  await expect(page.getByText(/resume: sent SIGCONT/)).toBeVisible();

  // The resumed worker presents term 1 once more and is refused.
  await expect
    .poll(async () => (await step(request, deliverId)).leases[0]!.rejections.map((r) => [r.presentedTerm, r.currentTerm]), { timeout: 30_000, intervals: [500] })
    .toContainEqual([1, 2]);
  await expect.poll(async () => (await step(request, deliverId)).step.state, { timeout: 30_000 }).toBe("completed");

  await page.goto(`/steps/${deliverId}`);
  const history = page.getByRole("table", { name: "Lease history, one row per fencing term" });
  await expect(history.locator("tbody tr")).toHaveCount(2);
  const stale = history.locator('tr[data-term="1"]');
  await expect(stale).toContainText("expired on the database clock");
  await expect(stale.getByTestId("fencing-rejection").first()).toContainText("presented term 1, current term 2");
  await expect(history.locator('tr[data-term="2"]').getByTestId("fencing-rejection")).toHaveCount(0);

  // Attempts are picked one at a time, never merged; the tabs are in the URL.
  await expect(page.getByLabel("Attempt", { exact: true })).toHaveValue(/.+/);
  await expect(page.getByLabel("Attempt", { exact: true }).locator("option")).toHaveCount(2);
  await page.getByRole("tab", { name: /Recovery decisions/ }).click();
  await expect(page).toHaveURL(/tab=recovery/);
  await expect(page.getByRole("tabpanel")).toContainText("retry same key");
  await page.getByRole("tab", { name: /Attempts/ }).click();
  await shoot(page, "step");

  await page.goto("/workers");
  await expect(page.locator("tr[data-session]:not([data-stopped])")).toHaveCount(2);
  await shoot(page, "workers");

  await page.goto(`/requests`);
  await expect(page.getByRole("link", { name: /^deliver/ }).first()).toBeVisible();
  await shoot(page, "requests");

  await page.goto("/metrics?range=15m");
  await expect(page.getByRole("heading", { name: "Lease churn" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Outcome uncertainty" })).toBeVisible();
  await expect(page.getByRole("heading", { name: /Fencing rejections/ })).toBeVisible();
  await shoot(page, "metrics");
});

test("an engineer revokes a lease in flight at an opaque destination: recorded, and recovery sends it to review", async ({ page, request }) => {
  test.setTimeout(120_000);
  const put = await request.put("/api/lab/faults", { data: { kinds: { opaque: { latency: { fixedMs: 4000 } } } } });
  expect(put.status()).toBe(200);
  const created = await createDelivery(request, { recipient: "grace@example.com", message: "Compiler notes", deliverVia: "opaque" }, `e2e-revoke-${Date.now()}`);
  expect(created.status()).toBe(201);
  const { id: workflowId } = (await created.json()) as { id: string };
  const steps = (await (await request.get(`/api/steps?workflow=${workflowId}`)).json()) as { items: { id: string; name: string }[] };
  const deliverId = steps.items.find((s) => s.name === "deliver")!.id;
  await expect
    .poll(async () => (await step(request, deliverId)).attempts.at(-1)?.checkpoint, { timeout: 60_000, intervals: [100] })
    .toBe("invocation_began");

  await page.goto(`/steps/${deliverId}`);
  await page.getByRole("button", { name: "Revoke lease…" }).click();
  const dialog = page.getByRole("dialog", { name: /Revoke term 1/ });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel("Reason").fill("e2e: holder looks wedged");
  await dialog.getByRole("button", { name: "Confirm revoke" }).click();
  // The invocation began at a destination that can neither deduplicate nor be asked: a person decides.
  await expect(page.getByText(/Term 1 revoked; recovery decided: review/)).toBeVisible();
  await expect(dialog).toBeHidden();
  const history = page.getByRole("table", { name: "Lease history, one row per fencing term" });
  await expect(history.locator('tr[data-term="1"]')).toContainText("revoked by an engineer");
  await expect(page.getByText("Outcome unknown: a review case is open")).toBeVisible();
  await expect(page.getByRole("button", { name: "Revoke lease…" })).toBeDisabled();
  const detail = await step(request, deliverId);
  expect(detail.leases).toHaveLength(1);
  expect(detail.step.state).toBe("indeterminate");
  await request.put("/api/lab/faults", { data: {} });
});

test("the metrics API refuses an unbounded range and the Prometheus text keeps the families apart", async ({ request }) => {
  const refused = await request.get("/api/metrics?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&bucket=1m");
  expect(refused.status()).toBe(400);
  expect(refused.headers()["content-type"]).toBe("application/problem+json");
  const text = await (await request.get("/api/metrics/prometheus")).text();
  expect(text).toMatch(/^# TYPE fenceline_churn_lease_acquisitions_total counter$/m);
  expect(text).toMatch(/^# TYPE fenceline_uncertainty_fencing_rejections_total counter$/m);
});
