/**
 * `npm run worker`: one worker process. It registers a session (unique per process start),
 * claims and runs steps, and stops gracefully on SIGTERM or SIGINT. Settings come from the
 * environment: DATABASE_URL, FENCELINE_WORKER_CONCURRENCY, FENCELINE_POLL_INTERVAL_MS,
 * FENCELINE_RECOVERY_INTERVAL_MS, FENCELINE_DESTINATION_URL (the synthetic destination service;
 * without it only pure steps run); checkpoint hooks for tests: see lib/worker/hooks.ts.
 */
import { createPool, databaseUrl, processName } from "@/lib/db/pool";
import { directCoordinator } from "@/lib/worker/coordinator";
import { defaultHandlers } from "@/lib/worker/handlers";
import { hooksFromEnvironment } from "@/lib/worker/hooks";
import { Worker } from "@/lib/worker/worker";
import { integerFromEnv } from "@/lib/env";

const concurrency = integerFromEnv("FENCELINE_WORKER_CONCURRENCY", 10);
const pool = createPool(databaseUrl(), { applicationName: processName(), max: Math.min(20, concurrency + 3) });
const worker = new Worker({
  coordinator: directCoordinator(pool),
  handlers: defaultHandlers({ destinationUrl: process.env.FENCELINE_DESTINATION_URL }),
  concurrency,
  pollIntervalMs: integerFromEnv("FENCELINE_POLL_INTERVAL_MS", 1_000),
  recoveryIntervalMs: integerFromEnv("FENCELINE_RECOVERY_INTERVAL_MS", 1_000),
  hooks: hooksFromEnvironment(),
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await worker.stop(signal);
  await pool.end();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

const sessionId = await worker.start();
process.stdout.write(`FENCELINE_WORKER_READY ${sessionId} pid ${process.pid}\n`);
