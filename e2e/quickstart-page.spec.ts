import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import AxeBuilder from "@axe-core/playwright";
import { buildPackage } from "../lib/sdk/package/build";
import { expect, test, type Page } from "./fixtures";
import { signInAs } from "./login";
import { createDelivery } from "./requests";

// The quickstart's own page, on its own origin, shows a request's progress with
// `<RequestProgress>` from the packed `fenceline/react` until Completed: it reads Fenceline
// across origins (the web server lists the page's origin in FENCELINE_TRACK_ORIGINS), under the
// page's own strict Content-Security-Policy, polls cheaply (ETag revalidation), and passes axe
// in light and dark themes.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
// As playwright.config.ts: the origin the web server allows.
const PAGE_PORT = Number(process.env.E2E_PAGE_PORT ?? Number(process.env.E2E_PORT ?? 3100) + 1000);
const PAGE = `http://127.0.0.1:${PAGE_PORT}`;

let project: string;
let server: ChildProcess | undefined;

test.beforeAll(async ({ baseURL }) => {
  test.setTimeout(360_000);
  const built = await buildPackage();
  project = await mkdtemp(path.join(tmpdir(), "fenceline-quickstart-page-"));
  await cp(path.join(ROOT, "examples/quickstart"), project, { recursive: true, filter: (source) => !/node_modules|package-lock\.json/.test(source) });
  const manifestPath = path.join(project, "package.json");
  const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as { dependencies: Record<string, string> };
  manifest.dependencies.fenceline = `file:${built.tarball}`;
  await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, timeout: 300_000 });

  // tsx itself, as `npm run page` runs it: npm would not pass SIGTERM on.
  server = spawn(process.execPath, [path.join(project, "node_modules/tsx/dist/cli.mjs"), "src/page.ts"], {
    cwd: project,
    env: { ...process.env, FENCELINE_URL: baseURL!, PAGE_PORT: String(PAGE_PORT) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: server!.stdout! }).on("line", (line) => {
      lines.push(line);
      if (line.includes("your customer's page at")) resolve();
    });
    createInterface({ input: server!.stderr! }).on("line", (line) => lines.push(`[err] ${line}`));
    server!.once("exit", (code) => reject(new Error(`the page server exited (${code}):\n${lines.join("\n")}`)));
  });
});

test.afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server!.once("exit", resolve));
  }
  if (project) await rm(project, { recursive: true, force: true });
});

async function expectAccessible(page: Page, theme: "light" | "dark"): Promise<void> {
  await page.emulateMedia({ colorScheme: theme });
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const serious = results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(serious.map((violation) => ({ id: violation.id, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(" ")) })), theme).toEqual([]);
}

test("the quickstart page shows a request's progress through <RequestProgress> until Completed, axe clean in both themes", async ({ page, request }) => {
  test.setTimeout(120_000);
  const created = await createDelivery(request, { recipient: "page@example.test", message: "on the adopter's page", deliverVia: "idempotent" }, `e2e-page-${Date.now()}`);
  expect(created.status()).toBe(201);
  const { trackingToken } = (await created.json()) as { trackingToken: string };

  const polls: { bytes: number }[] = [];
  page.on("requestfinished", async (finished) => {
    if (!finished.url().includes("/api/track/")) return;
    const sizes = await finished.sizes();
    polls.push({ bytes: sizes.responseHeadersSize + sizes.responseBodySize });
  });

  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`${PAGE}/?token=${trackingToken}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Your welcome card");
  const progress = page.getByRole("region", { name: "Delivery to page@example.test" });
  await expect(progress).toBeVisible();
  await expect(progress.locator('[data-fenceline="headline"]')).toHaveText(/Completed/, { timeout: 60_000 });
  await expect(progress.getByRole("list", { name: "Progress" }).getByRole("listitem").filter({ hasText: "Confirmation sent" })).toContainText("done");
  await expect(progress.locator('[data-fenceline="reference"]')).toHaveText(/^FL-[0-9A-F]{4}-[0-9A-F]{4}$/);

  await expectAccessible(page, "light");
  await page.screenshot({ path: "docs/screenshots/quickstart-page.png", fullPage: true });
  await expectAccessible(page, "dark");
  await page.screenshot({ path: "docs/screenshots/quickstart-page-dark.png", fullPage: true });

  // Terminal: the hook stopped polling.
  const settled = polls.length;
  await page.waitForTimeout(3_000);
  expect(polls.length).toBe(settled);
  console.log(`[quickstart page] ${JSON.stringify({ polls: polls.length, bytes: polls.map((poll) => poll.bytes) })}`);
});

test("an unknown token is said plainly on the adopter's page, and /api/track keeps its defences across origins", async ({ page, request }) => {
  await page.goto(`${PAGE}/?token=${"A".repeat(32)}`);
  await expect(page.getByRole("status")).toHaveText("We couldn't find this request. Check the link you were sent.");

  const answer = await request.get(`/api/track/${"A".repeat(32)}`, { headers: { origin: PAGE } });
  expect(answer.status()).toBe(404);
  expect(answer.headers()).toMatchObject({ "access-control-allow-origin": PAGE, "referrer-policy": "no-referrer", "x-content-type-options": "nosniff" });
  expect(answer.headers()["content-security-policy"]).toContain("default-src 'none'");
  const foreign = await request.get(`/api/track/${"A".repeat(32)}`, { headers: { origin: "https://elsewhere.example" } });
  expect(foreign.headers()["access-control-allow-origin"]).toBeUndefined();
});

test("while nothing changes the page polls ever less often, each poll a bodiless 304, and not at all in a hidden tab", async ({ page, request }) => {
  test.setTimeout(150_000);
  // A delivery whose answer is lost at an opaque destination waits for a person: its view stops changing.
  await signInAs(request, "engineer");
  expect((await request.put("/api/lab/faults", { data: { kinds: { opaque: { dropResponseRate: 1 } } } })).status()).toBe(200);
  try {
    const created = await createDelivery(request, { recipient: "review@example.test", message: "answer lost", deliverVia: "opaque" }, `e2e-page-review-${Date.now()}`);
    expect(created.status()).toBe(201);
    const { trackingToken } = (await created.json()) as { trackingToken: string };

    const polls: { at: number; revalidated: boolean; bytes: number }[] = [];
    page.on("requestfinished", async (finished) => {
      if (!finished.url().includes("/api/track/")) return;
      const [sizes, sent] = await Promise.all([finished.sizes(), finished.allHeaders()]);
      // Playwright reports a revalidated answer as the cached 200; on the wire it was a bodiless 304.
      const revalidated = sent["if-none-match"] !== undefined && sizes.responseBodySize === 0;
      polls.push({ at: Date.now(), revalidated, bytes: sizes.responseHeadersSize + sizes.responseBodySize });
    });
    // What the browser reports when the tab is hidden, under the test's control.
    await page.addInitScript(() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => ((window as unknown as { hiddenTab?: boolean }).hiddenTab ? "hidden" : "visible") });
    });
    await page.goto(`${PAGE}/?token=${trackingToken}`);
    await expect(page.locator('[data-fenceline="headline"]')).toHaveText(/Delivery status needs review/, { timeout: 60_000 });

    // From the first poll that found the view unchanged, every poll finds it unchanged.
    await expect.poll(() => polls.filter((poll) => poll.revalidated).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(4);
    const settledFrom = polls.findIndex((poll) => poll.revalidated);
    const unchanged = polls.slice(settledFrom, settledFrom + 4);
    expect(unchanged.map((poll) => poll.revalidated)).toEqual([true, true, true, true]);
    const gaps = unchanged.slice(1).map((poll, index) => poll.at - unchanged[index]!.at);
    // Half as long again after every poll that found the same view.
    for (let index = 1; index < gaps.length; index += 1) expect(gaps[index]!, JSON.stringify(gaps)).toBeGreaterThan(gaps[index - 1]! * 1.25);

    const setHidden = (hidden: boolean) =>
      page.evaluate((value) => {
        (window as unknown as { hiddenTab?: boolean }).hiddenTab = value;
        document.dispatchEvent(new Event("visibilitychange", { bubbles: true }));
      }, hidden);
    await setHidden(true);
    const hiddenFrom = polls.length;
    await page.waitForTimeout(15_000);
    expect(polls.length, "no poll while the tab is hidden").toBe(hiddenFrom);
    const shownAt = Date.now();
    await setHidden(false);
    await expect.poll(() => polls.length, { timeout: 3_000 }).toBeGreaterThan(hiddenFrom);
    expect(polls[hiddenFrom]!.at - shownAt, "back in view, it looks at once").toBeLessThan(1_500);

    const notModified = polls.filter((poll) => poll.revalidated);
    const full = polls.filter((poll) => !poll.revalidated);
    console.log(
      `[quickstart page, waiting request] ${JSON.stringify({ polls: polls.length, notModified: notModified.length, gapsMs: gaps, bytesPer304: notModified.map((poll) => poll.bytes), bytesPer200: full.map((poll) => poll.bytes) })}`,
    );
  } finally {
    await request.put("/api/lab/faults", { data: {} });
  }
});
