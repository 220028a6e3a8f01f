/**
 * `npm run worker`: one worker process for a definitions module (a module that exports
 * workflows made with `defineWorkflow`; the demo's, lib/demo/definitions.ts, by default, or the
 * path in FENCELINE_DEFINITIONS). It registers a session (unique per process start) with what
 * it serves, claims and runs steps, and stops gracefully on SIGTERM or SIGINT. Settings come
 * from the environment: DATABASE_URL, FENCELINE_WORKER_CONCURRENCY, FENCELINE_POLL_INTERVAL_MS,
 * FENCELINE_RECOVERY_INTERVAL_MS, FENCELINE_DESTINATION_URL (the demo's synthetic destination);
 * checkpoint hooks for tests: see lib/worker/hooks.ts.
 *
 * Transport (FENCELINE_WORKER_TRANSPORT): `direct` (default) reaches the database itself with
 * DATABASE_URL; `http` reaches the coordinator through the web app's worker protocol instead,
 * with FENCELINE_COORDINATOR_URL (the web app's origin) and FENCELINE_WORKER_TOKEN, and needs no
 * database access. Over HTTP the worker waits up to FENCELINE_COORDINATOR_WAIT_MS (default 60 s)
 * for the web app to answer its first request; FENCELINE_COORDINATOR_TIMEOUT_MS bounds each request.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createPool, directDatabaseUrl, processName, sessionPoolOf } from "@/lib/db/pool";
import { workflowsExportedBy } from "@/lib/definitions/workflow";
import type { Coordinator } from "@/lib/worker/coordinator";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import { httpCoordinator, WorkerTransportError } from "@/lib/worker/http-coordinator";
import { hooksFromEnvironment } from "@/lib/worker/hooks";
import { Worker } from "@/lib/worker/worker";
import { startTelemetry, stopTelemetry } from "@/lib/telemetry/start";
import { integerFromEnv, requiredEnv, retentionScheduleFromEnv, SettingError } from "@/lib/env";
import { command, CommandError, DATABASE_ENVIRONMENT, exit, resolveAppDatabase } from "./command";

command({
  name: "npm run worker",
  summary: "runs one worker process: it registers a session, claims ready steps and runs them until SIGTERM or SIGINT, when it hands its work back.",
  options: {},
  environment: [
    { name: "FENCELINE_DEFINITIONS", default: "lib/demo/definitions.ts", description: "the module whose exported workflows (defineWorkflow) this worker serves" },
    { name: "FENCELINE_WORKER_TRANSPORT", default: "direct", description: "direct: use the database; http: use the web app's worker protocol" },
    { name: "FENCELINE_WORKER_CONCURRENCY", default: "10", description: "attempts run at once" },
    { name: "FENCELINE_POLL_INTERVAL_MS", default: "1000", description: "longest wait for work when no notification arrives" },
    { name: "FENCELINE_RECOVERY_INTERVAL_MS", default: "1000", description: "recovery scan interval" },
    { name: "FENCELINE_RETENTION_EVERY_HOURS", default: "24", description: "with direct: the retention job runs this often across all coordinators (0: never, run `npm run retention` yourself)" },
    { name: "FENCELINE_RETENTION_DAYS", default: "30", description: "with direct: days the audit detail is kept at least" },
    { name: "FENCELINE_DESTINATION_URL", default: "http://127.0.0.1:4100", description: "the demo's synthetic destination service" },
    { name: "FENCELINE_COORDINATOR_URL", description: "with http: the web app's origin" },
    { name: "FENCELINE_WORKER_TOKEN", description: "with http: the worker token (an admin creates one at /admin)" },
    { name: "FENCELINE_COORDINATOR_WAIT_MS", default: "60000", description: "with http: how long to wait for the web app to answer" },
    { name: "FENCELINE_COORDINATOR_TIMEOUT_MS", default: "10000", description: "with http: bound on each request" },
    { name: "OTEL_EXPORTER_OTLP_ENDPOINT", description: "traces go to this OTLP/HTTP collector (with OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER…); none when unset" },
    ...DATABASE_ENVIRONMENT.map((variable) => ({ ...variable, description: `with direct: ${variable.description}` })),
  ],
  examples: ["FENCELINE_DESTINATION_URL=http://127.0.0.1:4100 npm run worker"],
});

const DEFAULT_DEFINITIONS = new URL("../demo/definitions.ts", import.meta.url);

// Traces when OTEL_* asks for them (docs/operating/tracing.md); the SDK is not loaded otherwise.
await startTelemetry({ serviceName: "fenceline-worker" });

const concurrency = integerFromEnv("FENCELINE_WORKER_CONCURRENCY", 10);
const transport = process.env.FENCELINE_WORKER_TRANSPORT || "direct";
if (transport !== "direct" && transport !== "http") {
  throw new SettingError(`FENCELINE_WORKER_TRANSPORT must be "direct" or "http", got "${transport}"`);
}

const definitionsPath = process.env.FENCELINE_DEFINITIONS;
const definitionsUrl = definitionsPath ? pathToFileURL(path.resolve(definitionsPath)) : DEFAULT_DEFINITIONS;
const definitions = (await import(definitionsUrl.href).catch((error: unknown) => {
  throw new CommandError(`the definitions module ${definitionsUrl.pathname} could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
})) as Record<string, unknown>;
const workflows = workflowsExportedBy(definitions);
if (workflows.length === 0) throw new CommandError(`${definitionsUrl.pathname} exports no workflow made with defineWorkflow`);

const pool =
  transport === "direct"
    ? createPool((await resolveAppDatabase()).url, { applicationName: processName(), max: Math.min(20, concurrency + 3), sessionConnectionString: directDatabaseUrl() })
    : null;
const coordinator: Coordinator = pool
  ? directCoordinator(pool, { listenPool: sessionPoolOf(pool), retention: retentionScheduleFromEnv() })
  : httpCoordinator({
      baseUrl: requiredEnv("FENCELINE_COORDINATOR_URL", "needed with FENCELINE_WORKER_TRANSPORT=http"),
      token: requiredEnv("FENCELINE_WORKER_TOKEN", "needed with FENCELINE_WORKER_TRANSPORT=http"),
      timeoutMs: integerFromEnv("FENCELINE_COORDINATOR_TIMEOUT_MS", 10_000),
    });
const worker = new Worker({
  coordinator,
  workflows,
  concurrency,
  pollIntervalMs: integerFromEnv("FENCELINE_POLL_INTERVAL_MS", 1_000),
  recoveryIntervalMs: integerFromEnv("FENCELINE_RECOVERY_INTERVAL_MS", 1_000),
  hooks: hooksFromEnvironment(),
});

/** Registers the session; over HTTP, keeps trying while the web app is still starting. */
async function start(): Promise<string> {
  const waitUntil = Date.now() + (transport === "http" ? integerFromEnv("FENCELINE_COORDINATOR_WAIT_MS", 60_000, { min: 0 }) : 0);
  for (let delayMs = 250; ; delayMs = Math.min(2_000, delayMs * 2)) {
    try {
      return await worker.start();
    } catch (error) {
      // Only "not answering yet" is worth waiting out; a refusal (wrong token: 401) is final.
      const refused = !(error instanceof WorkerTransportError) || (error.status !== null && error.status < 500);
      if (refused || Date.now() + delayMs > waitUntil) throw error;
      process.stderr.write(`[worker] coordinator not reachable yet (${error instanceof Error ? error.message : String(error)}); retrying\n`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await worker.stop(signal);
  await pool?.end();
  await stopTelemetry();
  await exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

const sessionId = await start();
process.stdout.write(`FENCELINE_WORKER_READY ${sessionId} pid ${process.pid} transport ${transport} serves ${workflows.map((w) => `${w.kind}@${w.version}`).join(",")}\n`);
