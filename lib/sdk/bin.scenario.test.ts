/**
 * The package's `fenceline` command as a process: `--help` says what each command does; a
 * definitions module that fails to load is named with the reason; `fenceline dev` creates a
 * migrated database, runs a worker for the module, restarts it when a file beside the module
 * changes, says in one sentence how to install the dashboard when it is not, and on Ctrl-C stops
 * the worker and drops the database. With the dashboard installed: dev.scenario.test.ts.
 */
import { mkdir, rm, writeFile, appendFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DIR = path.join(ROOT, ".data", `bin-scenario-${process.pid}`);
const started: Spawned[] = [];
const fenceline = (args: string, env: Record<string, string> = {}) => {
  // spawnNodeProcess runs a script; the arguments ride on FENCELINE_BIN_ARGS through a tiny shim.
  const child = spawnNodeProcess(`fenceline ${args}`, path.join(DIR, "shim.ts"), { FENCELINE_BIN_ARGS: args, ...env });
  started.push(child);
  return child;
};

afterAll(async () => {
  for (const child of started) if (child.alive) child.process.kill("SIGKILL");
  await rm(DIR, { recursive: true, force: true });
});

beforeAll(async () => {
  await mkdir(path.join(DIR, "app"), { recursive: true });
  await writeFile(path.join(DIR, "shim.ts"), `process.argv.splice(2, 0, ...process.env.FENCELINE_BIN_ARGS!.split(" "));\nawait import(${JSON.stringify(path.join(ROOT, "lib/sdk/bin.ts"))});\n`);
  await writeFile(
    path.join(DIR, "app/definitions.ts"),
    `import { z } from "zod";\nimport { defineWorkflow, done } from ${JSON.stringify(path.join(ROOT, "lib/sdk/index.ts"))};\n` +
      `export const hello = defineWorkflow({ kind: "hello", version: 1, input: z.object({}), steps: { greet: { milestone: { upcoming: "Hello", current: "Saying hello", done: "Said hello" }, run: async () => done() } } });\n`,
  );
  await writeFile(path.join(DIR, "app/broken.mjs"), `throw new Error("a typo in the module");\n`);
});

test("--help says what worker, dev and --help do", async () => {
  const help = fenceline("--help");
  expect((await help.exited).code).toBe(0);
  const text = help.linesMatching(/./).join("\n");
  expect(text).toMatch(/fenceline worker <module> +run a worker/);
  expect(text).toMatch(/fenceline dev <module> +start a fresh development database/);
  expect(text).toMatch(/and, when fenceline-dashboard is installed, the dashboard and the\s+HTTP API/);
});

test("a definitions module that fails to load is named, with the reason", async () => {
  const broken = fenceline(`worker ${path.join(DIR, "app/broken.mjs")}`, { DATABASE_URL: "postgresql://unused@127.0.0.1:1/x" });
  expect((await broken.exited).code).toBe(2);
  expect(broken.tail()).toContain(`fenceline: the definitions module ${path.join(DIR, "app/broken.mjs")} could not be loaded: a typo in the module`);
});

test("dev: a migrated database and a worker for the module, restarted on change, all gone after Ctrl-C", async () => {
  const server = inject("databaseServerUrl");
  const dev = fenceline(`dev ${path.join(DIR, "app/definitions.ts")}`, { DATABASE_URL: server });
  const ready = await dev.waitForLine(/^database ready, with Fenceline's migrations: DATABASE_URL=/, 30_000);
  const databaseUrl = ready.slice(ready.indexOf("DATABASE_URL=") + "DATABASE_URL=".length);
  // This checkout has no fenceline-dashboard installed: one sentence says how to get it.
  expect(dev.linesMatching(/^the dashboard and HTTP API are not installed/)[0]).toMatch(/npm install -D <path>\/fenceline-dashboard-<version>\.tgz/);
  await dev.waitForLine(/serves hello@1 on the database/, 30_000);

  const probe = new pg.Client({ connectionString: databaseUrl, options: "-c search_path=fenceline" });
  await probe.connect();
  const sessions = async () => (await probe.query<{ n: number }>("SELECT count(*)::int AS n FROM worker_session")).rows[0]!.n;
  expect(await sessions()).toBe(1);

  await appendFile(path.join(DIR, "app/definitions.ts"), "// edited\n");
  await dev.waitForLine(/changed: restarting the worker/, 20_000);
  await expect.poll(() => dev.linesMatching(/serves hello@1 on the database/).length, { timeout: 20_000 }).toBe(2);
  expect(await sessions()).toBe(2);
  await probe.end();

  dev.process.kill("SIGINT");
  expect((await dev.exited).code).toBe(0);
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [decodeURIComponent(new URL(databaseUrl).pathname.slice(1))]);
  await admin.end();
  expect(rowCount).toBe(0);
}, 120_000);
