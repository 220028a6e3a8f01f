/**
 * `npm run relay`: one webhook relay process (lib/webhooks/relay.ts). Several may run at once,
 * on any machines that reach the database: each delivery is sent under a lease on its row.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { createPool, processName } from "@/lib/db/pool";
import { integerFromEnv } from "@/lib/env";
import { Relay } from "@/lib/webhooks/relay";
import { command, DATABASE_ENVIRONMENT, exit, resolveAppDatabase } from "./command";

command({
  name: "npm run relay",
  summary: "delivers outbox events to webhook endpoints, signed, retried with backoff, until SIGTERM or SIGINT.",
  options: {},
  environment: [
    { name: "FENCELINE_WEBHOOK_TIMEOUT_MS", default: "10000", description: "bound on one delivery" },
    { name: "FENCELINE_WEBHOOK_BACKOFF_BASE_MS", default: "5000", description: "first retry delay (doubles per retry, jittered)" },
    { name: "FENCELINE_WEBHOOK_BACKOFF_MAX_MS", default: "3600000", description: "longest retry delay" },
    { name: "FENCELINE_WEBHOOK_RETRY_WINDOW_MS", default: "86400000", description: "how long a delivery is retried before it is dead-lettered" },
    { name: "FENCELINE_RELAY_CONCURRENCY", default: "10", description: "deliveries sent at once" },
    { name: "FENCELINE_RELAY_INTERVAL_MS", default: "250", description: "wait between passes when idle" },
    ...DATABASE_ENVIRONMENT,
  ],
  examples: ["npm run relay"],
});

// Settings first: a mistake in one is reported before any database is started.
const settings = {
  timeoutMs: integerFromEnv("FENCELINE_WEBHOOK_TIMEOUT_MS", 10_000),
  backoffBaseMs: integerFromEnv("FENCELINE_WEBHOOK_BACKOFF_BASE_MS", 5_000),
  backoffMaxMs: integerFromEnv("FENCELINE_WEBHOOK_BACKOFF_MAX_MS", 3_600_000),
  retryWindowMs: integerFromEnv("FENCELINE_WEBHOOK_RETRY_WINDOW_MS", 86_400_000),
  concurrency: integerFromEnv("FENCELINE_RELAY_CONCURRENCY", 10),
  intervalMs: integerFromEnv("FENCELINE_RELAY_INTERVAL_MS", 250),
};
const pool = createPool((await resolveAppDatabase()).url, { applicationName: processName(), max: 4 });
const relay = new Relay(pool, `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, settings);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await relay.stop();
  await pool.end();
  await exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());

relay.start();
process.stdout.write(`FENCELINE_RELAY_READY ${relay.name}\n`);
