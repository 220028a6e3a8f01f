#!/usr/bin/env node
/**
 * The `fenceline` command of the package:
 *
 *   fenceline worker <module>   a worker for the workflows <module> exports: over HTTP with
 *                               FENCELINE_URL and FENCELINE_WORKER_TOKEN (production), or on the
 *                               database itself with DATABASE_URL when FENCELINE_URL is not set
 *   fenceline dev <module>      a fresh database (embedded PostgreSQL unless DATABASE_URL is set)
 *                               with the engine's migrations, and a worker for <module> that
 *                               restarts when a file beside it changes
 *   fenceline --help
 *
 * A TypeScript module loads through `tsx` when the project has it installed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
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
                              database on DATABASE_URL's server) with Fenceline's migrations, and a
                              worker for <module> that restarts when a file in its folder changes
  fenceline --help            this text

A TypeScript module is loaded through tsx when your project has it (npm install -D tsx).
Not in the package yet: the dashboard and the HTTP API (tracking pages, review queue, requests
from fenceline/client). For those, run Fenceline itself (npm start in its checkout) on the
database \`fenceline dev\` prints.`;

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
  const running = new Worker({ coordinator: directCoordinator(pool), workflows, log: (line) => console.error(`[fenceline worker] ${line}`) });
  const sessionId = await running.start();
  console.log(`worker ${sessionId} serves ${served(workflows)} on the database`);
  const stop = (signal: string) => void running.stop(signal).finally(() => pool.end().finally(() => process.exit(0)));
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

async function dev(modulePath: string): Promise<void> {
  const file = path.resolve(modulePath);
  await loadWorkflows(file);
  console.log("starting a development database…");
  const database = await environmentDatabase();
  console.log(`database ready: DATABASE_URL=${database.url}`);
  const self = fileURLToPath(import.meta.url);
  let child: ChildProcess | null = null;
  let stopping = false;
  const startWorker = () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url };
    delete env.FENCELINE_URL;
    child = spawn(process.execPath, [...process.execArgv, self, "worker", file], { env, stdio: "inherit" });
    child.once("exit", (code, signal) => {
      if (!stopping && signal === null && code !== 0) console.error(`the worker exited (code ${code}); it starts again when a file changes`);
    });
  };
  const stopWorker = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  startWorker();

  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(path.dirname(file), { recursive: true }, (_event, changed) => {
    if (changed && /node_modules|\.git/.test(changed)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      console.log(`${changed ?? "a file"} changed: restarting the worker`);
      void stopWorker().then(startWorker);
    }, 200);
  });
  console.log(`watching ${path.dirname(file)}; Ctrl-C stops the worker and drops the database`);
  console.log("not included yet: the dashboard and the HTTP API; run Fenceline's `npm start` with the DATABASE_URL above for them");

  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    clearTimeout(timer);
    watcher.close();
    await stopWorker();
    await database.drop();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown());
  process.once("SIGTERM", () => void shutdown());
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
