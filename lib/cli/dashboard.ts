/**
 * The entry of the `fenceline-dashboard` package (bundled into its start.mjs by
 * lib/sdk/package/dashboard.ts), which `fenceline dev` runs: on a migrated database, it seeds the
 * demo sign-ins and stores this run's worker token and app key, as `npm start` does in demo mode,
 * then runs the dashboard and HTTP API (Next.js's standalone server, beside this file) in this
 * same process. It prints a `demo sign-in …` line per account, then `FENCELINE_DASHBOARD_READY <url>`
 * once /api/health answers.
 *
 * Environment (set by `fenceline dev`): DATABASE_URL, PORT, FENCELINE_WORKER_TOKEN,
 * FENCELINE_API_KEY, FENCELINE_AUTH_SECRET, FENCELINE_PUBLIC_URL; FENCELINE_DEMO_PASSWORD, when
 * the adopter sets it, is every demo account's password (otherwise each gets a new one).
 * The Next server stops on SIGTERM/SIGINT by itself.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { installAppKey } from "@/lib/auth/app-keys";
import { seedDemoAccounts } from "@/lib/auth/demo-accounts";
import { installWorkerToken } from "@/lib/auth/worker-tokens";
import { engineSchema, searchPathOption } from "@/lib/db/schema.mjs";

const HEALTH_TIMEOUT_MS = 60_000;
const REQUIRED = ["DATABASE_URL", "PORT", "FENCELINE_WORKER_TOKEN", "FENCELINE_API_KEY", "FENCELINE_AUTH_SECRET"] as const;

async function main(): Promise<void> {
  const missing = REQUIRED.filter((name) => !process.env[name]);
  if (missing.length > 0) throw new Error(`fenceline-dashboard is started by \`fenceline dev\`, which sets ${missing.join(", ")}`);
  const env = Object.fromEntries(REQUIRED.map((name) => [name, process.env[name]!])) as Record<(typeof REQUIRED)[number], string>;

  // A plain pool rather than lib/db/pool's, which would bundle the Prisma client into this file.
  const setup = new pg.Pool({ connectionString: env.DATABASE_URL, application_name: "fenceline-dashboard-setup", max: 2, options: searchPathOption(engineSchema()) });
  try {
    for (const account of await seedDemoAccounts(setup, process.env.FENCELINE_DEMO_PASSWORD || undefined)) console.log(`demo sign-in (${account.roles.join(", ")}): ${account.email} / ${account.password}`);
    await installWorkerToken(setup, "fenceline-dev-workers", env.FENCELINE_WORKER_TOKEN, "fenceline dev");
    await installAppKey(setup, "dev", env.FENCELINE_API_KEY, ["requests:create", "requests:read", "requests:evidence", "events:send", "schedules:manage"], "fenceline dev");
  } finally {
    await setup.end();
  }

  const url = `http://127.0.0.1:${env.PORT}`;
  // Read by Next's standalone server.js and by the web app.
  process.env.HOSTNAME = "127.0.0.1";
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  process.env.FENCELINE_DEMO = "on";
  process.env.FENCELINE_PUBLIC_URL ||= url;
  process.env.FENCELINE_PROCESS = "fenceline-dashboard";
  await import(pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "server", "server.js")).href);

  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`${url}/api/health`).catch(() => undefined);
    if (response?.ok) break;
    if (Date.now() > deadline) throw new Error(`the dashboard did not answer ${url}/api/health within ${HEALTH_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.log(`FENCELINE_DASHBOARD_READY ${url}`);
}

main().catch((error: unknown) => {
  console.error(`fenceline-dashboard: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
