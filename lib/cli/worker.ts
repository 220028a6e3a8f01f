/**
 * `npm run worker`: one worker process. It registers a session (unique per process start),
 * claims and runs steps, and stops gracefully on SIGTERM or SIGINT. Settings come from the
 * environment: DATABASE_URL, FENCELINE_WORKER_CONCURRENCY, FENCELINE_POLL_INTERVAL_MS,
 * FENCELINE_RECOVERY_INTERVAL_MS, FENCELINE_DESTINATION_URL (the synthetic destination service;
 * without it only pure steps run); checkpoint hooks for tests: see lib/worker/hooks.ts.
 *
 * Transport (FENCELINE_WORKER_TRANSPORT): `direct` (default) reaches the database itself with
 * DATABASE_URL; `http` reaches the coordinator through the web app's worker protocol instead,
 * with FENCELINE_COORDINATOR_URL (the web app's origin) and FENCELINE_WORKER_TOKEN, and needs no
 * database access. Over HTTP the worker waits up to FENCELINE_COORDINATOR_WAIT_MS (default 60 s)
 * for the web app to answer its first request; FENCELINE_COORDINATOR_TIMEOUT_MS bounds each request.
 */
import { createPool, databaseUrl, processName } from "@/lib/db/pool";
import { directCoordinator, type Coordinator } from "@/lib/worker/coordinator";
import { httpCoordinator, WorkerTransportError } from "@/lib/worker/http-coordinator";
import { defaultHandlers } from "@/lib/worker/handlers";
import { hooksFromEnvironment } from "@/lib/worker/hooks";
import { Worker } from "@/lib/worker/worker";
import { integerFromEnv } from "@/lib/env";

const concurrency = integerFromEnv("FENCELINE_WORKER_CONCURRENCY", 10);
const transport = process.env.FENCELINE_WORKER_TRANSPORT || "direct";
if (transport !== "direct" && transport !== "http") {
  throw new Error(`FENCELINE_WORKER_TRANSPORT must be "direct" or "http", got "${transport}"`);
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (needed with FENCELINE_WORKER_TRANSPORT=http)`);
  return value;
}

const pool = transport === "direct" ? createPool(databaseUrl(), { applicationName: processName(), max: Math.min(20, concurrency + 3) }) : null;
const coordinator: Coordinator = pool
  ? directCoordinator(pool)
  : httpCoordinator({
      baseUrl: requiredEnv("FENCELINE_COORDINATOR_URL"),
      token: requiredEnv("FENCELINE_WORKER_TOKEN"),
      timeoutMs: integerFromEnv("FENCELINE_COORDINATOR_TIMEOUT_MS", 10_000),
    });
const worker = new Worker({
  coordinator,
  handlers: defaultHandlers({ destinationUrl: process.env.FENCELINE_DESTINATION_URL }),
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
      const refused = error instanceof WorkerTransportError && error.status !== null && error.status < 500;
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
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

const sessionId = await start();
process.stdout.write(`FENCELINE_WORKER_READY ${sessionId} pid ${process.pid} transport ${transport}\n`);
