#!/usr/bin/env node
/**
 * The `fenceline` command of the package:
 *
 *   fenceline worker <module>   a worker for the workflows <module> exports: over HTTP with
 *                               FENCELINE_URL and FENCELINE_WORKER_TOKEN (production), or on the
 *                               database itself with DATABASE_URL when FENCELINE_URL is not set
 *   fenceline dev <module>      a fresh database (embedded PostgreSQL unless DATABASE_URL is set)
 *                               with the engine's migrations, a worker for <module> that
 *                               restarts when a file beside it changes, and the dashboard and
 *                               HTTP API from the companion package `fenceline-dashboard` when
 *                               the project has it installed (docs/decisions/018)
 *   fenceline --help
 *
 * A TypeScript module loads through `tsx` when the project has it installed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, watch, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { workflowsExportedBy, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { environmentDatabase } from "@/lib/testing/database";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import { runWorker } from "@/lib/worker/http-worker";
import { Worker } from "@/lib/worker/worker";

const HELP = `fenceline — run your workflows on Fenceline

Usage:
  fenceline worker <module>   run a worker for the workflows <module> exports (defineWorkflow)
                              FENCELINE_URL + FENCELINE_WORKER_TOKEN: over HTTP, as in production
                              otherwise DATABASE_URL: on the engine's database directly
  fenceline dev <module>      start a fresh development database (an embedded PostgreSQL, or a new
                              database on DATABASE_URL's server) with Fenceline's migrations, a
                              worker for <module> that restarts when a file in its folder changes,
                              and, when fenceline-dashboard is installed, the dashboard and the
                              HTTP API on PORT (default 3000) with demo sign-ins; it prints their
                              URL and the FENCELINE_* lines your own scripts need
  fenceline --help            this text

A TypeScript module is loaded through tsx when your project has it (npm install -D tsx).`;

/** One sentence: what \`fenceline dev\` runs without the companion package, and how to get it. */
const DASHBOARD_MISSING =
  "the dashboard and HTTP API are not installed, so only the database and the worker run: install them with `npm install -D <path>/fenceline-dashboard-<version>.tgz` (Fenceline's `npm run package` writes it beside fenceline-<version>.tgz)";

class UsageError extends Error {}

/** Loads the adopter's definitions module, naming the file and the reason when it cannot. */
async function loadWorkflows(modulePath: string): Promise<WorkflowDefinition[]> {
  const file = path.resolve(modulePath);
  if (/\.[cm]?tsx?$/.test(file)) {
    let register: () => unknown;
    try {
      // The project's own tsx, by its ESM entry (require.resolve would find the CommonJS one).
      const manifest = createRequire(path.join(process.cwd(), "package.json")).resolve("tsx/package.json");
      const { exports } = JSON.parse(await readFile(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> };
      ({ register } = (await import(pathToFileURL(path.join(path.dirname(manifest), exports["./esm/api"]!.import.default)).href)) as { register: () => unknown });
    } catch {
      throw new UsageError(`${modulePath} is TypeScript: install tsx in this project (npm install -D tsx), or point at its compiled .js`);
    }
    register();
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`the definitions module ${file} could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  const workflows = workflowsExportedBy(loaded);
  if (workflows.length === 0) throw new UsageError(`${file} exports no workflow made with defineWorkflow`);
  return workflows;
}

const served = (workflows: readonly WorkflowDefinition[]) => workflows.map((workflow) => `${workflow.kind}@${workflow.version}`).join(", ");

async function worker(modulePath: string): Promise<void> {
  const workflows = await loadWorkflows(modulePath);
  const { FENCELINE_URL: url, FENCELINE_WORKER_TOKEN: token, DATABASE_URL: databaseUrl } = process.env;
  if (url) {
    if (!token) throw new UsageError("FENCELINE_URL is set but FENCELINE_WORKER_TOKEN is not: an admin creates worker tokens on Fenceline's /admin page");
    const running = await runWorker({ url, token, workflows });
    console.log(`worker ${running.sessionId} serves ${served(workflows)} at ${url}`);
    return;
  }
  if (!databaseUrl) throw new UsageError("set FENCELINE_URL and FENCELINE_WORKER_TOKEN (a worker over HTTP), or DATABASE_URL (a worker on the database)");
  const pool = new pg.Pool({ connectionString: databaseUrl, application_name: "fenceline-worker", max: 12, options: "-c search_path=fenceline" });
  pool.on("error", (error) => console.error(`[fenceline worker] idle connection failed: ${error.message}`));
  // A checked-out connection can die too (the database stopping); its statement reports it.
  pool.on("connect", (client) => client.on("error", () => undefined));
  const running = new Worker({ coordinator: directCoordinator(pool), workflows, log: (line) => console.error(`[fenceline worker] ${line}`) });
  const sessionId = await running.start();
  console.log(`worker ${sessionId} serves ${served(workflows)} on the database`);
  const stop = (signal: string) => void running.stop(signal).finally(() => pool.end().finally(() => process.exit(0)));
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

/** How long the dashboard may take from its start to its ready line, and each child to stop. */
const DASHBOARD_READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 10_000;

/** The companion package's entry, resolved from the adopter's project; null when it is not installed. */
function dashboardEntry(): string | null {
  try {
    const manifest = createRequire(path.join(process.cwd(), "package.json")).resolve("fenceline-dashboard/package.json");
    return path.join(path.dirname(manifest), "start.mjs");
  } catch {
    return null;
  }
}

/** Stops a child with SIGTERM, then SIGKILL if it has not exited in time; resolves once it has. */
function stopChild(child: ChildProcess | null): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

const secret = () => randomBytes(24).toString("base64url");

async function dev(modulePath: string): Promise<void> {
  const file = path.resolve(modulePath);
  // The module is loaded by the worker only: it may start services of its own when imported.
  if (!existsSync(file)) throw new UsageError(`the definitions module ${file} does not exist`);
  const port = process.env.PORT || "3000";
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65_535) throw new UsageError(`PORT must be a port number, got "${port}"`);
  const entry = dashboardEntry();
  if (!entry) console.log(DASHBOARD_MISSING);

  let stopping = false;
  let worker: ChildProcess | null = null;
  let dashboard: ChildProcess | null = null;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let database: Awaited<ReturnType<typeof environmentDatabase>> | undefined;
  const shutdown = async (code: number, reason?: string) => {
    if (stopping) return;
    stopping = true;
    if (reason) console.error(reason);
    clearTimeout(timer);
    watcher?.close();
    await Promise.all([stopChild(worker), stopChild(dashboard)]);
    await database?.drop().catch((error: unknown) => {
      // Ctrl-C in a terminal reaches the embedded server too, which then stops with its data:
      // only a database on DATABASE_URL's server can be left behind.
      if (process.env.DATABASE_URL) console.error(`fenceline: the development database ${database?.name} was not dropped: ${error instanceof Error ? error.message : String(error)}`);
    });
    process.exit(code);
  };
  process.once("SIGINT", () => void shutdown(0, "stopping: the worker, the dashboard, then the database"));
  process.once("SIGTERM", () => void shutdown(0, "stopping: the worker, the dashboard, then the database"));

  console.log(process.env.DATABASE_URL ? "creating a development database on DATABASE_URL's server…" : "starting a development database (embedded PostgreSQL)…");
  database = await environmentDatabase();
  if (stopping) return;
  console.log(`database ready, with Fenceline's migrations: DATABASE_URL=${database.url}`);
  const databaseUrl = database.url;

  const self = fileURLToPath(import.meta.url);
  const startWorker = () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
    delete env.FENCELINE_URL;
    worker = spawn(process.execPath, [...process.execArgv, self, "worker", file], { env, stdio: "inherit" });
    worker.once("exit", (code, signal) => {
      if (!stopping && signal === null && code !== 0) console.error(`the worker exited (code ${code}); it starts again when a file changes`);
    });
  };
  startWorker();
  watcher = watch(path.dirname(file), { recursive: true }, (_event, changed) => {
    if (changed && /node_modules|\.git/.test(changed)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      console.log(`${changed ?? "a file"} changed: restarting the worker`);
      void stopChild(worker).then(() => stopping || startWorker());
    }, 200);
  });
  console.log(`watching ${path.dirname(file)}: the worker restarts when a file there changes`);
  if (!entry) {
    console.log("Ctrl-C stops the worker and drops the database");
    return;
  }

  const credentials = { FENCELINE_WORKER_TOKEN: secret(), FENCELINE_API_KEY: `fl_app_${secret()}` };
  const url = `http://127.0.0.1:${port}`;
  console.log("starting the dashboard and HTTP API…");
  const started = spawn(process.execPath, [entry], {
    env: { ...process.env, ...credentials, DATABASE_URL: databaseUrl, PORT: port, FENCELINE_AUTH_SECRET: secret(), FENCELINE_PUBLIC_URL: url },
    stdio: ["ignore", "pipe", "inherit"],
  });
  dashboard = started;
  const signIns: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error(`the dashboard did not become ready within ${DASHBOARD_READY_TIMEOUT_MS / 1000} s`)), DASHBOARD_READY_TIMEOUT_MS);
    createInterface({ input: started.stdout! }).on("line", (line) => {
      if (line.startsWith("FENCELINE_DASHBOARD_READY ")) {
        clearTimeout(timeout);
        resolve();
      } else if (line.startsWith("demo sign-in ")) signIns.push(line);
      else console.log(`[dashboard] ${line}`);
    });
    started.once("exit", (code, signal) => {
      clearTimeout(timeout);
      reject(new Error(`the dashboard stopped (code ${code}, signal ${signal})`));
    });
  });
  try {
    await ready;
  } catch (error) {
    return shutdown(1, `fenceline: ${(error as Error).message}; stopping the worker and dropping the database`);
  }
  started.once("exit", (code, signal) => void shutdown(1, `fenceline: the dashboard stopped (code ${code}, signal ${signal}); stopping the worker and dropping the database`));
  console.log(`Fenceline is running at ${url}/ (the dashboard and the HTTP API)`);
  for (const line of signIns) console.log(line);
  console.log("to run your own workers and requests against it, paste these three lines into your shell:");
  for (const line of [`FENCELINE_URL=${url}`, ...Object.entries(credentials).map(([name, value]) => `${name}=${value}`)]) console.log(`export ${line}`);
  console.log("Ctrl-C stops the worker and the dashboard, and drops the database");
}

async function main(argv: readonly string[]): Promise<void> {
  const [subcommand, modulePath, ...extra] = argv;
  if (subcommand === undefined || subcommand === "--help" || subcommand === "-h" || subcommand === "help") {
    console.log(HELP);
    return;
  }
  if (subcommand !== "worker" && subcommand !== "dev") throw new UsageError(`unknown command "${subcommand}": fenceline --help lists them`);
  if (!modulePath) throw new UsageError(`fenceline ${subcommand} needs the definitions module: fenceline ${subcommand} src/workflows.ts`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  await (subcommand === "worker" ? worker(modulePath) : dev(modulePath));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`fenceline: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
