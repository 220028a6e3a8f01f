/**
 * `fenceline dev` as an adopter meets it: both tarballs (`fenceline`, `fenceline-dashboard`)
 * packed from this repository and installed into a copy of examples/quickstart outside it, then
 * `fenceline dev src/dev.ts` run there as a process group of its own, on an embedded PostgreSQL.
 *
 * - It prints the dashboard's URL, the demo sign-ins and the three FENCELINE_* lines.
 * - With the printed app key, the quickstart's own request script takes a `welcome` request to
 *   Completed; an engineer signed in with the printed login sees both steps completed through the
 *   dashboard's API, and the greeting card service got one card.
 * - SIGTERM stops it with exit code 0, and no process of its group (PostgreSQL, the Next server,
 *   the worker) is left, nor anything listening on its port; so does Ctrl-C, which reaches the
 *   embedded PostgreSQL as well, and its data directory goes too.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { buildPackage, type BuiltPackage } from "./build";
import { buildDashboardPackage, type BuiltDashboard } from "./dashboard";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../../..");
const BUILD_TIMEOUT_MS = 420_000;

let dist: string;
let project: string;
let built: BuiltPackage;
let dashboard: BuiltDashboard;
let dev: ChildProcess | undefined;

/**
 * The processes still running in process group `group`, as "pid args". A zombie (`<defunct>`,
 * e.g. tsx's esbuild service after the worker exited) has already exited and holds nothing; it
 * waits for whichever process adopted it to reap it.
 */
async function groupMembers(group: number): Promise<string[]> {
  const { stdout } = await run("ps", ["-ww", "-eo", "pid=,pgid=,args="]);
  return stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, pgid]) => Number(pgid) === group)
    .map((fields) => `${fields[0]} ${fields.slice(2).join(" ")}`)
    .filter((member) => !member.endsWith("<defunct>"));
}

beforeAll(async () => {
  // Its own dist/, so the package scenario can pack beside it.
  dist = await mkdtemp(path.join(tmpdir(), "fenceline-dev-dist-"));
  project = await mkdtemp(path.join(tmpdir(), "fenceline-dev-adopter-"));
  // As root, the embedded PostgreSQL runs as `postgres`, which must reach node_modules.
  await chmod(project, 0o755);
  const started = Date.now();
  [built, dashboard] = await Promise.all([buildPackage(dist), buildDashboardPackage(dist)]);
  console.log(`[dev] packed in ${Date.now() - started} ms: ${JSON.stringify({ fenceline: { bytes: built.bytes, files: built.files }, dashboard: { bytes: dashboard.bytes, files: dashboard.files, unpackedBytes: dashboard.unpackedBytes } })}`);

  await cp(path.join(ROOT, "examples/quickstart"), project, { recursive: true, filter: (source) => !/node_modules|package-lock\.json/.test(source) });
  const manifestPath = path.join(project, "package.json");
  const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  manifest.dependencies.fenceline = `file:${built.tarball}`;
  manifest.devDependencies["fenceline-dashboard"] = `file:${dashboard.tarball}`;
  await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
  const installing = Date.now();
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, timeout: 300_000 });
  console.log(`[dev] npm install of the quickstart with both tarballs: ${Date.now() - installing} ms`);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  // A failed test leaves nothing behind either: the whole group goes.
  if (dev?.pid && dev.exitCode === null) {
    try {
      process.kill(-dev.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (project) await rm(project, { recursive: true, force: true });
  if (dist) await rm(dist, { recursive: true, force: true });
});

type Dev = {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly arrivedAt: Map<string, number>;
  seen(pattern: RegExp): string | undefined;
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
};

/** What `npx fenceline dev src/dev.ts` runs, without npm in between, as a process group of its own. */
function startDev(env: NodeJS.ProcessEnv): Dev {
  const child = spawn(process.execPath, [path.join(project, "node_modules/fenceline/lib/sdk/bin.js"), "dev", "src/dev.ts"], { cwd: project, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  dev = child;
  const lines: string[] = [];
  const arrivedAt = new Map<string, number>();
  const waiters = new Set<() => void>();
  const seen = (pattern: RegExp) => lines.find((line) => pattern.test(line));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    arrivedAt.set(line, Date.now());
    for (const waiter of waiters) waiter();
  });
  createInterface({ input: child.stderr! }).on("line", (line) => lines.push(`[err] ${line}`));
  // A dev that exits will print nothing more: its waiters fail then, with what it printed.
  child.once("exit", () => setImmediate(() => waiters.forEach((waiter) => waiter())));
  const waitForLine = (pattern: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = seen(pattern);
        if (line) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(line);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`fenceline dev exited (${child.exitCode ?? child.signalCode}) before a line matching ${pattern}:\n${lines.join("\n")}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`fenceline dev printed no line matching ${pattern} within ${timeoutMs} ms:\n${lines.join("\n")}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { child, lines, arrivedAt, seen, waitForLine };
}

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));

/** The data directory of the embedded PostgreSQL in process group `group` (its `-D`). */
async function embeddedDataDirectory(group: number): Promise<string> {
  const postgres = (await groupMembers(group)).find((member) => /\/postgres -D /.test(member));
  expect(postgres, "the embedded PostgreSQL runs in the group").toBeDefined();
  return /-D (\S+)/.exec(postgres!)![1]!;
}

const exists = (file: string) => stat(file).then(() => true, () => false);

test("fenceline dev serves the dashboard and HTTP API: a request of the adopter's kind reaches Completed, and SIGTERM leaves nothing behind", async () => {
  const port = await freePort();
  const greetingsUrl = `http://127.0.0.1:${await freePort()}`;
  const env = { ...process.env, PORT: String(port), GREETINGS_URL: greetingsUrl, DATABASE_URL: "", FENCELINE_DEMO_PASSWORD: "" };
  const startedAt = Date.now();
  const { child, lines, arrivedAt, seen, waitForLine } = startDev(env);
  await waitForLine(/^Fenceline is running at /, 120_000);
  const readyAt = Date.now();
  await waitForLine(/^export FENCELINE_API_KEY=/, 5_000);
  await waitForLine(/serves welcome@1 on the database/, 30_000);
  const databaseAt = arrivedAt.get(seen(/^database ready/)!)!;
  const dashboardFrom = arrivedAt.get(seen(/^starting the dashboard/)!)!;
  console.log(`[dev] fenceline dev: start → dashboard ready in ${readyAt - startedAt} ms; of it the embedded PostgreSQL and migrations ${databaseAt - startedAt} ms, the dashboard (seeding, Next server, first /api/health) ${readyAt - dashboardFrom} ms`);
  expect(seen(/^Fenceline is running at /)).toBe(`Fenceline is running at http://127.0.0.1:${port}/ (the dashboard and the HTTP API)`);
  const printed = Object.fromEntries(lines.filter((line) => line.startsWith("export FENCELINE_")).map((line) => line.slice("export ".length).split("="))) as Record<string, string>;
  expect(Object.keys(printed).sort()).toEqual(["FENCELINE_API_KEY", "FENCELINE_URL", "FENCELINE_WORKER_TOKEN"]);
  expect(printed.FENCELINE_URL).toBe(`http://127.0.0.1:${port}`);
  const engineer = /^demo sign-in \(engineer\): (\S+) \/ (\S+)$/.exec(seen(/^demo sign-in \(engineer\)/) ?? "");
  expect(engineer, lines.join("\n")).not.toBeNull();
  expect(lines.filter((line) => line.startsWith("demo sign-in ("))).toHaveLength(3);

  // The adopter's backend, with the printed key: the quickstart's own request script.
  const { stdout } = await run(process.execPath, [path.join(project, "node_modules/tsx/dist/cli.mjs"), "src/request.ts", "Grace"], { cwd: project, env: { ...process.env, ...printed }, timeout: 120_000 });
  const last = JSON.parse(stdout.trim().split("\n").at(-1)!) as { requestId: string; status: string };
  expect(last.status, lines.join("\n")).toBe("completed");

  // An engineer signed in with the printed login sees it through the dashboard's API.
  const signIn = await fetch(`${printed.FENCELINE_URL}/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: engineer![1], password: engineer![2] }) });
  expect(signIn.status).toBe(200);
  const cookie = signIn.headers.getSetCookie().map((header) => header.split(";")[0]).join("; ");
  const steps = (await (await fetch(`${printed.FENCELINE_URL}/api/steps?workflow=${last.requestId}`, { headers: { cookie } })).json()) as { items: { name: string; state: string }[] };
  expect(steps.items.map((step) => [step.name, step.state]).sort()).toEqual([["compose", "completed"], ["send", "completed"]]);
  expect(await (await fetch(`${greetingsUrl}/cards`)).json()).toEqual([{ id: "card_1", to: "Grace", text: "Welcome, Grace!" }]);

  const group = child.pid!;
  const data = await embeddedDataDirectory(group);
  const stoppedAt = Date.now();
  child.kill("SIGTERM");
  const code = await exitOf(child);
  console.log(`[dev] SIGTERM → exit in ${Date.now() - stoppedAt} ms`);
  expect(code, lines.join("\n")).toBe(0);
  expect(await groupMembers(group)).toEqual([]);
  expect(await exists(path.dirname(data)), data).toBe(false);
  const stillListening = await fetch(`${printed.FENCELINE_URL}/api/health`).then(() => true, () => false);
  expect(stillListening).toBe(false);
}, 240_000);

test("Ctrl-C in a terminal (SIGINT to the whole group, the embedded PostgreSQL included) stops everything and leaves no data directory", async () => {
  const { child, lines, waitForLine } = startDev({ ...process.env, PORT: String(await freePort()), GREETINGS_URL: `http://127.0.0.1:${await freePort()}`, DATABASE_URL: "" });
  await waitForLine(/^Ctrl-C stops the worker and the dashboard/, 120_000);
  const group = child.pid!;
  const data = await embeddedDataDirectory(group);
  process.kill(-group, "SIGINT");
  expect(await exitOf(child), lines.join("\n")).toBe(0);
  expect(await groupMembers(group)).toEqual([]);
  expect(await exists(path.dirname(data)), data).toBe(false);
  // Plain words only: no stack trace of an unhandled error.
  expect(lines.filter((line) => /^\[err\]\s+at /.test(line))).toEqual([]);
}, 180_000);
