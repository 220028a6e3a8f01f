/**
 * The package as an adopter meets it: packed from this repository, installed into a project of
 * its own outside the repository, and driven the way examples/quickstart's README says, against
 * Fenceline as `npm start` runs it.
 *
 * - The tarball passes publint and arethetypeswrong (ESM only): its exports resolve, with types.
 * - The installed package type-checks the adopter's module, and the client's input is typed from
 *   the workflow by `import type`: a wrong field does not compile.
 * - The quickstart's worker (HTTP, a worker token, no database URL) and its request script take
 *   a request of the adopter's own kind to Completed, with a receipt per step, one effect at the
 *   adopter's service, and the step page showing the contract the adapter declared.
 * - The quickstart's own tests (`npm test`: node's test runner, fenceline/testing on an embedded
 *   PostgreSQL) pass from the installed package, and leave no PostgreSQL running.
 * - examples/orders, installed the same way, type-checks, and its worker and `npm run demo` take
 *   every order through a charge, an event wait (its event sent early, and again with the same
 *   idempotency key) and a timer to Completed, while a schedule starts a stock count every 3 s (no
 *   due time twice); the demo's last line, read from the server, says so.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { publint } from "publint";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";
import { buildPackage, type BuiltPackage } from "./build";
import { GroupRunError, runInGroup } from "./process-group";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const DEMO_PASSWORD = "package-scenario-password-0123";
const BUILD_AND_START_TIMEOUT_MS = 300_000;

let built: BuiltPackage;
let app: Spawned;
let project: string;
let fenceline: { FENCELINE_URL: string; FENCELINE_WORKER_TOKEN: string; FENCELINE_API_KEY: string };
const children: ChildProcess[] = [];

beforeAll(async () => {
  const port = await freePort();
  app = spawnNodeProcess("npm-start", "lib/cli/start.ts", {
    PORT: String(port),
    FENCELINE_DATABASE: "package_scenario",
    FENCELINE_FRESH_DATABASE: "1",
    // Demo mode prints the three lines; no demo traffic or demo workers: only the adopter's run.
    FENCELINE_DEMO: "sign-ins",
    FENCELINE_WORKERS: "0",
    DESTINATION_PORT: "0",
    FENCELINE_DEMO_PASSWORD: DEMO_PASSWORD,
  });
  [built] = await Promise.all([buildPackage(), app.waitForLine(/Fenceline is running at/, BUILD_AND_START_TIMEOUT_MS)]);
  const printed = await app.waitForLine(/^export FENCELINE_API_KEY=/);
  const lines = app.linesMatching(/^export FENCELINE_/).map((line) => line.slice("export ".length).split("="));
  fenceline = Object.fromEntries(lines) as typeof fenceline;
  expect(printed).toContain(fenceline.FENCELINE_API_KEY);
  project = await mkdtemp(path.join(tmpdir(), "fenceline-adopter-"));
  // An ordinary project directory, not mkdtemp's private one: as root, the embedded PostgreSQL of
  // the project's tests runs as the `postgres` user, which must reach node_modules.
  await chmod(project, 0o755);
}, BUILD_AND_START_TIMEOUT_MS);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  if (app?.alive) app.process.kill("SIGTERM");
  await app?.exited;
  if (project) await rm(project, { recursive: true, force: true });
});

test("the packed package's exports resolve with their types (publint, arethetypeswrong, ESM only)", async () => {
  const { messages } = await publint({ pkgDir: path.join(ROOT, "dist/package"), level: "suggestion" });
  expect(messages).toEqual([]);
  // attw exits non-zero on any resolution problem of any entry point.
  await run(path.join(ROOT, "node_modules/.bin/attw"), [built.tarball, "--profile", "esm-only"], { cwd: ROOT });
  expect(built.doors).toEqual(expect.arrayContaining([".", "./client", "./worker"]));
  console.log(`[package] ${JSON.stringify({ tarball: path.basename(built.tarball), bytes: built.bytes, files: built.files, doors: built.doors })}`);
});

describe("an adopter's project outside the repository", () => {
  let installedAt: number;

  test("installs the tarball and type-checks its own workflow; a wrong input field does not compile", async () => {
    await cp(path.join(ROOT, "examples/quickstart"), project, { recursive: true, filter: (source) => !/node_modules|package-lock\.json/.test(source) });
    const manifestPath = path.join(project, "package.json");
    const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as { dependencies: Record<string, string> };
    expect(manifest.dependencies.fenceline).toMatch(/^file:\.\.\/\.\.\/dist\/fenceline-.+\.tgz$/);
    manifest.dependencies.fenceline = `file:${built.tarball}`;
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));

    const started = Date.now();
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, timeout: 240_000 });
    installedAt = Date.now();
    console.log(`[package] npm install in the adopter's project: ${installedAt - started} ms`);
    await run("npm", ["run", "typecheck"], { cwd: project });

    await writeFile(
      path.join(project, "src/mistake.ts"),
      `import { createClient } from "fenceline/client";\nimport type { welcome } from "./workflow.js";\n` +
        `export const typo = () => createClient({ url: "http://127.0.0.1:1", apiKey: "k" }).requests.create<typeof welcome>("welcome", { nam: "Ada" });\n`,
    );
    const refused = await run("npm", ["run", "typecheck"], { cwd: project }).then(() => null, (error: { stdout: string }) => error.stdout);
    await rm(path.join(project, "src/mistake.ts"));
    expect(refused).toMatch(/src\/mistake\.ts.*'nam' does not exist/);
  }, 300_000);

  test("the quickstart's npm test passes from the installed package, under injected faults, and leaves no PostgreSQL behind", async () => {
    expect(installedAt, "the project was installed").toBeDefined();
    const started = Date.now();
    // In a process group of its own: on a failure or timeout, node's test runner and the kit's
    // workers and PostgreSQL it started are killed with npm, not left running.
    const { stdout } = await runInGroup("npm", ["test"], { cwd: project, env: { ...process.env, DATABASE_URL: "" }, timeoutMs: 240_000 }).catch((error: unknown) => {
      if (!(error instanceof GroupRunError)) throw error;
      throw new Error(`npm test ${error.result.timedOut ? "timed out" : "failed"}:\n${error.result.stdout}\n${error.result.stderr}`);
    });
    const durations = [...stdout.matchAll(/^✔ .* \(([\d.]+)ms\)$/gm)].map((match) => Number(match[1]));
    expect(stdout).toMatch(/ℹ pass 3\n/);
    expect(stdout).toMatch(/ℹ fail 0\n/);
    const sorted = [...durations].sort((a, b) => a - b);
    console.log(`[package] quickstart npm test: ${durations.length} tests in ${Date.now() - started} ms; each (ms, the first includes the environment's start): ${durations.map(Math.round).join(", ")}; median ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} ms`);
    // Only this project's processes (its PostgreSQL runs from its node_modules): other checkouts
    // on the machine run the kit's own tests, with PostgreSQL data dirs of the same name.
    const { stdout: processes } = await run("ps", ["-eo", "args"]);
    expect(processes.split("\n").filter((line) => line.includes(project))).toEqual([]);
  }, 300_000);

  test("examples/orders: every order waits for the warehouse's event and a timer, and completes; a cancelled one is refunded once; no event is duplicated", async () => {
    const orders = await mkdtemp(path.join(tmpdir(), "fenceline-orders-"));
    try {
      await cp(path.join(ROOT, "examples/orders"), orders, { recursive: true, filter: (source) => !/node_modules|package-lock\.json/.test(source) });
      const manifestPath = path.join(orders, "package.json");
      const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as { dependencies: Record<string, string> };
      expect(manifest.dependencies.fenceline).toMatch(/^file:\.\.\/\.\.\/dist\/fenceline-.+\.tgz$/);
      manifest.dependencies.fenceline = `file:${built.tarball}`;
      await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
      await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: orders, timeout: 240_000 });
      await run("npm", ["run", "typecheck"], { cwd: orders });

      const env = { ...process.env, ...fenceline, PAYMENTS_URL: `http://127.0.0.1:${await freePort()}`, DATABASE_URL: "" };
      const worker = spawn(process.execPath, [path.join(orders, "node_modules/tsx/dist/cli.mjs"), "src/worker.ts"], { cwd: orders, env, stdio: ["ignore", "pipe", "pipe"] });
      children.push(worker);
      const workerLines: string[] = [];
      createInterface({ input: worker.stderr! }).on("line", (line) => workerLines.push(`[err] ${line}`));
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: worker.stdout! }).on("line", (line) => {
          workerLines.push(line);
          if (/serves order@2/.test(line)) resolve();
        });
        worker.once("exit", (code) => reject(new Error(`the orders worker exited (${code}) before registering:\n${workerLines.join("\n")}`)));
      });

      const started = Date.now();
      const { stdout } = await run("npm", ["run", "--silent", "demo", "--", "6"], { cwd: orders, env, timeout: 120_000 });
      const figures = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
      console.log(`[package] orders demo in ${Date.now() - started} ms: ${JSON.stringify(figures)}`);
      expect(figures, workerLines.join("\n")).toEqual({
        orders: 6,
        // The fourth order is cancelled after its charge and refunded (its refund's first answer lost).
        completed: 5,
        timersFired: 5,
        timersEarly: 0,
        timerWaitedMs: { min: expect.any(Number), max: expect.any(Number), cooldownMs: 3_000 },
        eventsConsumed: 5,
        eventsKeptEarly: 3,
        eventsSentTwice: 5,
        duplicateEvents: 0,
        cancelledAfterCharge: 1,
        refunds: 1,
        duplicateRefunds: 0,
        refundsInReview: 0,
        // One shipment per order, of 2, 3, 4, 2, 3, 4 parcels: one parcel request each, once.
        shipmentsCompleted: 6,
        children: 18,
        duplicateChildren: 0,
        scheduleFirings: expect.any(Number),
        duplicateFirings: 0,
      });
      expect((figures.timerWaitedMs as { min: number }).min).toBeGreaterThanOrEqual(3_000);
      expect(figures.scheduleFirings as number, "the stock count's schedule fired while the demo ran").toBeGreaterThanOrEqual(2);

      worker.kill("SIGTERM");
      const exit = await new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code)));
      expect(exit, "the orders worker stops gracefully on SIGTERM").toBe(0);
    } finally {
      await rm(orders, { recursive: true, force: true });
    }
  }, 300_000);

  test("the quickstart takes a request of its own kind to Completed, with receipts and the declared contract on the step page", async () => {
    expect(installedAt, "the project was installed").toBeDefined();
    const workerStartedAt = Date.now();
    const greetingsUrl = `http://127.0.0.1:${await freePort()}`;
    const env = { ...process.env, ...fenceline, GREETINGS_URL: greetingsUrl, DATABASE_URL: "" };
    // tsx itself, as `npm run worker` runs it: npm would not pass SIGTERM on.
    const worker = spawn(process.execPath, [path.join(project, "node_modules/tsx/dist/cli.mjs"), "src/worker.ts"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(worker);
    const workerLines: string[] = [];
    const registered = new Promise<void>((resolve, reject) => {
      createInterface({ input: worker.stdout! }).on("line", (line) => {
        workerLines.push(line);
        if (/serves welcome@1/.test(line)) resolve();
      });
      worker.once("exit", (code) => reject(new Error(`the worker exited (${code}) before registering:\n${workerLines.join("\n")}`)));
    });
    createInterface({ input: worker.stderr! }).on("line", (line) => workerLines.push(`[err] ${line}`));
    // A request of a kind no worker has registered yet is refused (unknown kind), as it should be.
    await registered;

    const { stdout } = await run("npm", ["run", "--silent", "request", "--", "Grace"], { cwd: project, env, timeout: 120_000 });
    const completedAt = Date.now();
    const last = JSON.parse(stdout.trim().split("\n").at(-1)!) as { requestId: string; trackingUrl: string; status: string };
    expect(last, workerLines.join("\n")).toEqual({ requestId: expect.any(String), trackingUrl: expect.stringMatching(/\/track\/[\w-]+$/), status: "completed" });
    // Since the install, the project was also type-checked twice and its own tests ran.
    console.log(`[package] quickstart: worker started → request Completed in ${completedAt - workerStartedAt} ms; npm install → Completed in ${completedAt - installedAt} ms`);

    // One card at the adopter's service for one request.
    const cards = (await (await fetch(`${greetingsUrl}/cards`)).json()) as { id: string; text: string }[];
    expect(cards).toEqual([{ id: "card_1", to: "Grace", text: "Welcome, Grace!" }]);

    // An engineer sees both receipts and the contract the adapter declared.
    const base = fenceline.FENCELINE_URL;
    const signIn = await fetch(`${base}/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "engineer@fenceline.test", password: DEMO_PASSWORD }) });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie().map((header) => header.split(";")[0]).join("; ");
    const staffGet = async <T>(target: string): Promise<T> => {
      const response = await fetch(`${base}${target}`, { headers: { cookie } });
      expect(response.status, target).toBe(200);
      return (await response.json()) as T;
    };
    const steps = await staffGet<{ items: { id: string; name: string; state: string }[] }>(`/api/steps?workflow=${last.requestId}`);
    expect(steps.items.map((step) => [step.name, step.state]).sort()).toEqual([["compose", "completed"], ["send", "completed"]]);
    const send = steps.items.find((step) => step.name === "send")!;
    const detail = await staffGet<{ step: { adapter: string; contract: Record<string, unknown> }; receipts: { verificationMethod: string; externalReference: string | null }[] }>(`/api/steps/${send.id}`);
    expect(detail.step.contract).toMatchObject({ idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected", timeoutMs: 5_000, concurrencyLimit: 4 });
    expect(detail.receipts).toEqual([expect.objectContaining({ verificationMethod: "direct_response", externalReference: "card_1" })]);
    const page = await fetch(`${base}/steps/${send.id}`, { headers: { cookie } });
    expect(await page.text()).toContain("deduplicates by idempotency key, no status queries, ignores fencing terms; repetition idempotency protected");

    // The end user's page speaks the workflow's own words.
    const tracking = await (await fetch(last.trackingUrl)).text();
    expect(tracking).toContain("Welcome card for Grace");
    expect(tracking).toContain("Card sent");

    worker.kill("SIGTERM");
    const exit = await new Promise<number | null>((resolve) => worker.once("exit", (code) => resolve(code)));
    expect(exit, "the worker stops gracefully on SIGTERM").toBe(0);
  }, 180_000);
});
