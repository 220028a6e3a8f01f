import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";
import { DEMO_PASSWORD } from "./e2e/login";

// Debian's Chromium: Playwright's own browser download cannot reach its CDN from here.
const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  throw new Error(`${CHROMIUM} is missing: install Debian's browser with \`apt-get install -y chromium\` (.ci/run does).`);
}

// e2e/fixtures.ts fails a test on any Content-Security-Policy violation; a spec that takes
// `test` from Playwright itself, or opens a browser context around it, would go unwatched.
const specDir = fileURLToPath(new URL("e2e", import.meta.url));
for (const file of readdirSync(specDir).filter((name) => name.endsWith(".spec.ts"))) {
  const source = readFileSync(path.join(specDir, file), "utf8");
  if (/import\s*\{[^}]*\btest\b[^}]*\}\s*from\s*["']@playwright\/test["']/.test(source) || /\bbrowser\.new(Page|Context)\(/.test(source)) {
    throw new Error(`e2e/${file}: take \`test\` from ./fixtures and open other pages with its \`newPage\` fixture, so CSP violations fail the test`);
  }
}

const port = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://127.0.0.1:${port}`;
// The quickstart's own page (e2e/quickstart-page.spec.ts) reads tracking views from this origin.
const QUICKSTART_PAGE_PORT = Number(process.env.E2E_PAGE_PORT ?? port + 1000);
// The web app and its workers trace, exporting to e2e/tracing.spec.ts's receiver on this port
// (while no receiver listens, the exporter drops its batches quietly), and link to a trace UI.
const OTLP_PORT = Number(process.env.E2E_OTLP_PORT ?? port + 2000);
const tracing = {
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_PORT}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_BSP_SCHEDULE_DELAY: "300",
  FENCELINE_TRACE_URL: `http://127.0.0.1:${OTLP_PORT}/trace/{traceId}`,
};
// E2E_WEB_REPLICAS=2 runs the suite against that many web replicas behind haproxy on the same
// URL (replicas on E2E_REPLICA_PORT and after, default port+1); E2E_POOLER=pgbouncer adds
// PgBouncer on E2E_POOLER_PORT (default 6432). Decision 016.
const cluster = {
  ...(process.env.E2E_WEB_REPLICAS ? { FENCELINE_WEB_REPLICAS: process.env.E2E_WEB_REPLICAS, FENCELINE_REPLICA_PORT: process.env.E2E_REPLICA_PORT ?? String(port + 1) } : {}),
  ...(process.env.E2E_POOLER ? { FENCELINE_POOLER: process.env.E2E_POOLER, FENCELINE_POOLER_PORT: process.env.E2E_POOLER_PORT ?? "6432" } : {}),
};

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  reporter: [["list"]],
  use: {
    baseURL,
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    // The start script itself, not `npm start`: npm does not pass SIGTERM on to it.
    command: "node --import tsx lib/cli/start.ts",
    // A page only the built dashboard serves: on a first start the front door answers the API first.
    url: `${baseURL}/login`,
    // Its own database, emptied at every run.
    env: { PORT: String(port), FENCELINE_DATABASE: process.env.E2E_DATABASE ?? "e2e", FENCELINE_FRESH_DATABASE: "1", DESTINATION_PORT: "0", FENCELINE_DEMO: "sign-ins", FENCELINE_DEMO_PASSWORD: DEMO_PASSWORD, NEXT_TELEMETRY_DISABLED: "1", FENCELINE_TRACK_ORIGINS: `http://127.0.0.1:${QUICKSTART_PAGE_PORT}`, ...tracing, ...cluster },
    // Covers a first `next build` on a fresh clone.
    timeout: 240_000,
    reuseExistingServer: false,
    // SIGTERM lets the start script stop its children and the embedded cluster in order.
    gracefulShutdown: { signal: "SIGTERM", timeout: 20_000 },
    stdout: "pipe",
    stderr: "pipe",
  },
});
