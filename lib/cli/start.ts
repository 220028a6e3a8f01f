/**
 * `npm start`: the whole product on one machine. Resolves the database (DATABASE_URL, else the
 * embedded cluster's `app` database), applies migrations, then runs under one supervisor: the
 * synthetic destination service (waiting for its ready line), the web server, FENCELINE_WORKERS
 * workers (default 2), FENCELINE_RELAYS webhook relays (default 1) and the demo traffic, and
 * prints the URLs once /api/health answers. When the dashboard needs a build (a first start, or
 * sources newer than the build), the front door (lib/cli/front.ts) takes PORT first and serves the
 * requests API and the worker protocol while `next build` runs, then hands every request to the
 * dashboard once it answers; the URLs and the three `export` lines come before the build. SIGINT/SIGTERM stop the children first, then the embedded cluster if
 * this process started it and no other process is using it.
 *
 * Environment: PORT (default 3000), DESTINATION_PORT (default 4100, 0 picks a free port),
 * FENCELINE_WORKERS, FENCELINE_DEMO (on, the default: demo sign-ins, the fault lab and demo traffic;
 * sign-ins: no traffic; off: none of them; lib/lab/demo.ts; the traffic's own settings:
 * lib/cli/demo-traffic.ts),
 * FENCELINE_DATABASE (database name; with DATABASE_URL it replaces the URL's),
 * FENCELINE_FRESH_DATABASE=1 (drop and recreate that database first; the e2e suite uses it),
 * FENCELINE_DEMO_PASSWORD (fixes the demo accounts' password), DATABASE_URL,
 * FENCELINE_AUTH_SECRET (signs session cookies; random per start when unset), FENCELINE_PUBLIC_URL
 * (the URL staff use; an https one makes the session cookie Secure),
 * EMBEDDED_PG_PORT, FENCELINE_WORKER_TRANSPORT (`direct`, the default: workers use the database
 * themselves; `http`: workers get the web app's URL and the worker token instead of a database
 * URL, and use the HTTP worker protocol), FENCELINE_WORKER_TOKEN (the HTTP workers' bearer token,
 * stored hashed as worker identity "npm-start-workers"; a random one per run when unset; admins
 * create and revoke others at /admin), FENCELINE_API_KEY (with the demo on, the app key of app
 * "demo", which the demo traffic creates its requests with; a random one per run when unset).
 *
 * The cluster shape (lib/cli/cluster.ts, decision 016): FENCELINE_WEB_REPLICAS=N (default 1) runs N
 * web processes on FENCELINE_REPLICA_PORT and the ports after it (default PORT+1…) behind
 * haproxy on PORT; FENCELINE_POOLER=pgbouncer puts PgBouncer in transaction mode on
 * FENCELINE_POOLER_PORT (default 6432) between every process and the database, hands the direct
 * URL to what needs a session (DATABASE_DIRECT_URL), and sets FENCELINE_DB_PREPARED=off unless
 * it is set. Migrations and setup always use the direct URL.
 *
 * With the demo on it ends by printing, ready to paste into an adopter's shell, FENCELINE_URL,
 * FENCELINE_WORKER_TOKEN and FENCELINE_API_KEY: enough to run examples/quickstart against it.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveDatabaseUrl, type ResolvedDatabase } from "../db/database";
import { deployMigrations } from "../db/migrate.mjs";
import { seedDemoAccounts } from "@/lib/auth/demo-accounts";
import { installAppKey } from "@/lib/auth/app-keys";
import { installWorkerToken } from "@/lib/auth/worker-tokens";
import { createPool } from "@/lib/db/pool";
import { waitForDatabase } from "@/lib/db/readiness";
import { integerFromEnv, SettingError } from "@/lib/env";
import { freePort } from "@/lib/net/free-port";
import { demoSetting } from "@/lib/lab/demo";
import { acquireBuildLock } from "./build-lock";
import { configDirectory, haproxyChild, pgbouncerChild, pinSearchPath, pooledUrl, poolerSetting } from "./cluster";
import { command, DATABASE_ENVIRONMENT, describeFailure, exit } from "./command";
import { log, Supervisor } from "./supervisor";

command({
  name: "npm start",
  summary:
    "runs the whole product on this machine: the database (DATABASE_URL, else the embedded PostgreSQL), its migrations, the web app, the workers, the synthetic destination service and demo traffic, until Ctrl-C or SIGTERM stops them all.",
  options: {},
  environment: [
    { name: "PORT", default: "3000", description: "web app port (bound to 127.0.0.1)" },
    { name: "DESTINATION_PORT", default: "4100", description: "synthetic destination service port; 0 picks a free one" },
    { name: "FENCELINE_WORKERS", default: "2", description: "worker processes" },
    { name: "FENCELINE_RELAYS", default: "1", description: "webhook relay processes (their settings: lib/cli/relay.ts)" },
    { name: "FENCELINE_WORKER_TRANSPORT", default: "direct", description: "direct: workers use the database; http: the web app's worker protocol" },
    { name: "FENCELINE_WORKER_TOKEN", default: "random per start", description: "the HTTP workers' token" },
    { name: "FENCELINE_DEMO_PASSWORD", default: "random per start", description: "the demo accounts' password" },
    { name: "FENCELINE_DEMO", default: "on", description: "on: demo sign-ins, fault lab and demo traffic (its settings: npm run demo:traffic -- --help); sign-ins: the same without traffic; off: none (FENCELINE_MODE and FENCELINE_DEMO=0/1 still read, deprecated)" },
    { name: "FENCELINE_AUTH_SECRET", default: "random per start", description: "signs session cookies" },
    { name: "FENCELINE_PUBLIC_URL", default: "http://127.0.0.1:$PORT", description: "the URL staff use; https makes the session cookie Secure" },
    { name: "FENCELINE_FRESH_DATABASE", default: "0", description: "1: drop and recreate the database first" },
    { name: "FENCELINE_WEB_REPLICAS", default: "1", description: "web processes; more than 1 puts haproxy on PORT in front of them" },
    { name: "FENCELINE_REPLICA_PORT", default: "$PORT+1", description: "the first replica's port (with FENCELINE_WEB_REPLICAS > 1); the others follow it" },
    { name: "FENCELINE_POOLER", default: "none", description: "pgbouncer: PgBouncer in transaction mode between the processes and the database" },
    { name: "FENCELINE_POOLER_PORT", default: "6432", description: "PgBouncer's port" },
    { name: "FENCELINE_DB_PREPARED", default: "on (off behind the pooler)", description: "off: send statements unnamed (PgBouncer before 1.21)" },
    ...DATABASE_ENVIRONMENT.map((variable) =>
      variable.name === "FENCELINE_DATABASE" ? { ...variable, description: "database name (with DATABASE_URL it replaces the URL's)" } : variable,
    ),
  ],
  examples: ["npm start", "FENCELINE_WEB_REPLICAS=2 FENCELINE_POOLER=pgbouncer FENCELINE_WORKER_TRANSPORT=http npm start", "PORT=3001 FENCELINE_DEMO=sign-ins DATABASE_URL=postgresql://postgres@127.0.0.1:5432/fenceline npm start"],
});

const root = fileURLToPath(new URL("../..", import.meta.url));
const port = integerFromEnv("PORT", 3000, { max: 65_535 });
const destinationPort = integerFromEnv("DESTINATION_PORT", 4100, { min: 0, max: 65_535 });
const workerCount = integerFromEnv("FENCELINE_WORKERS", 2, { min: 0 });
const relayCount = integerFromEnv("FENCELINE_RELAYS", 1, { min: 0 });
const demo = demoSetting("on");
const replicaCount = integerFromEnv("FENCELINE_WEB_REPLICAS", 1, { min: 1, max: 16 });
const firstReplicaPort = integerFromEnv("FENCELINE_REPLICA_PORT", port + 1, { max: 65_535 - replicaCount });
const replicaPorts = replicaCount > 1 ? Array.from({ length: replicaCount }, (_, index) => firstReplicaPort + index) : [port];
const pooler = poolerSetting();
const poolerPort = integerFromEnv("FENCELINE_POOLER_PORT", 6432, { max: 65_535 });
const workerTransport = process.env.FENCELINE_WORKER_TRANSPORT || "direct";
if (workerTransport !== "direct" && workerTransport !== "http") {
  throw new SettingError(`FENCELINE_WORKER_TRANSPORT must be "direct" or "http", got "${workerTransport}"`);
}
const workerToken = process.env.FENCELINE_WORKER_TOKEN || randomBytes(32).toString("base64url");
const appKey = process.env.FENCELINE_API_KEY || `fl_app_${randomBytes(32).toString("base64url")}`;
// Signs session cookies; a new one per start unless given, which signs everyone out on restart.
const authSecret = process.env.FENCELINE_AUTH_SECRET || randomBytes(32).toString("base64url");
const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
const workerEntry = path.join(root, "lib", "cli", "worker.ts");
const relayEntry = path.join(root, "lib", "cli", "relay.ts");
const destinationEntry = path.join(root, "lib", "demo", "destination", "main.ts");
const demoTrafficEntry = path.join(root, "lib", "cli", "demo-traffic.ts");
const frontEntry = path.join(root, "lib", "cli", "front.ts");
const HEALTH_TIMEOUT_MS = 60_000;
const DESTINATION_READY_TIMEOUT_MS = 30_000;
const FRONT_READY_TIMEOUT_MS = 60_000;

let database: ResolvedDatabase | undefined;
let clusterConfig: { dir: string; remove: () => void } | undefined;
let shuttingDown = false;

const supervisor = new Supervisor({
  onUnexpectedExit: (exit) =>
    void shutdown(1, `${exit.name} exited unexpectedly (code ${exit.code}, signal ${exit.signal}): stopping everything`),
});

async function shutdown(exitCode: number, reason?: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  if (reason) log("start", reason);
  await supervisor.stopAll();
  clusterConfig?.remove();
  await database?.stop();
  await exit(exitCode);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  // Ctrl-C reaches the children too (same process group); a second signal changes nothing.
  process.on(signal, () => void shutdown(0, `${signal}: stopping`));
}

async function main(): Promise<void> {
  database = await resolveDatabaseUrl({
    database: process.env.FENCELINE_DATABASE || undefined,
    fresh: process.env.FENCELINE_FRESH_DATABASE === "1",
  });
  log("start", `database ${redact(database.url)}${database.embedded ? " (embedded)" : ""}`);

  const applied = await deployMigrations(database.url);
  log("start", applied.length ? `applied migrations: ${applied.join(", ")}` : "migrations up to date");

  const setupPool = createPool(database.url, { applicationName: "fenceline-start" });
  const demoAccounts = demo !== "off" ? await seedDemoAccounts(setupPool, process.env.FENCELINE_DEMO_PASSWORD) : [];
  // HTTP workers authenticate with a worker token: this run's is stored (hashed) for them, and in
  // demo printed for an adopter's own workers; the demo app's key likewise.
  if (workerTransport === "http" || demo !== "off") await installWorkerToken(setupPool, "npm-start-workers", workerToken, "npm start");
  if (demo !== "off") await installAppKey(setupPool, "demo", appKey, ["requests:create", "requests:read", "requests:evidence", "events:send", "schedules:manage"], "npm start");
  if (pooler === "pgbouncer") await pinSearchPath(setupPool, database.url);
  await setupPool.end();

  if (replicaCount > 1 || pooler === "pgbouncer") clusterConfig = configDirectory();
  let childEnv: Record<string, string> = { DATABASE_URL: database.url, NEXT_TELEMETRY_DISABLED: "1" };
  if (pooler === "pgbouncer") {
    const bouncer = supervisor.start(pgbouncerChild(clusterConfig!.dir, { directUrl: database.url, port: poolerPort, poolSize: 20 }));
    // PgBouncer logs to stderr; it is ready once it accepts a connection to the database.
    const accepting = await waitForDatabase(pooledUrl(database.url, poolerPort), { timeoutMs: HEALTH_TIMEOUT_MS, exited: bouncer.exited, cancelled: () => shuttingDown });
    if (!accepting || shuttingDown) return;
    childEnv = {
      ...childEnv,
      DATABASE_URL: pooledUrl(database.url, poolerPort),
      DATABASE_DIRECT_URL: database.url,
      FENCELINE_DB_PREPARED: process.env.FENCELINE_DB_PREPARED || "off",
    };
    log("start", `PgBouncer (transaction mode) at 127.0.0.1:${poolerPort}; sessions (LISTEN) and migrations use the direct URL`);
  }

  // A first start (no build yet, or sources newer than it) brings up the front door first: the
  // requests API and the worker protocol answer while the dashboard builds (lib/cli/front.ts).
  // The cluster shape builds first, as before: its replicas share one build.
  const staged = replicaCount === 1 && buildIsStale();
  if (!staged && !(await buildWhenStale(childEnv))) return;

  const destination = supervisor.start({
    name: "destination",
    stopWave: 2,
    command: process.execPath,
    args: ["--import", "tsx", destinationEntry],
    env: { DESTINATION_DATABASE_URL: database.url, DESTINATION_PORT: String(destinationPort), FENCELINE_PROCESS: "fenceline-destination" },
    cwd: root,
  });
  // The URL comes from the ready line: with DESTINATION_PORT=0 only the service knows its port.
  const [, destinationUrl] = await destination.waitForLine(/^FENCELINE_DESTINATION_READY (\S+)$/, DESTINATION_READY_TIMEOUT_MS);
  if (shuttingDown || !destinationUrl) return;

  // Replicas share the build, the auth secret and the public URL: whichever answers, a session
  // cookie, a server action and an origin check mean the same.
  // The web app reaches the destination service for the fault lab, which exists in demo mode only.
  const webEnv = (name: string): Record<string, string> => ({
    ...childEnv,
    FENCELINE_DESTINATION_URL: destinationUrl,
    FENCELINE_DEMO: demo,
    FENCELINE_MODE: "",
    FENCELINE_AUTH_SECRET: authSecret,
    FENCELINE_PUBLIC_URL: process.env.FENCELINE_PUBLIC_URL ?? `http://127.0.0.1:${port}`,
    FENCELINE_PROCESS: `fenceline-${name}`,
  });
  const startWeb = (name: string, webPort: number) =>
    supervisor.start({ name, stopWave: 1, command: process.execPath, args: [nextBin, "start", "-H", "127.0.0.1", "-p", String(webPort)], env: webEnv(name), cwd: root });
  let dashboardPort: number | undefined;
  if (staged) {
    dashboardPort = await freePort();
    const front = supervisor.start({
      name: "front",
      stopWave: 1,
      command: process.execPath,
      args: ["--import", "tsx", frontEntry],
      env: { ...webEnv("front"), PORT: String(port), FENCELINE_DASHBOARD_PORT: String(dashboardPort) },
      cwd: root,
    });
    await front.waitForLine(/^FENCELINE_FRONT_READY /, FRONT_READY_TIMEOUT_MS);
    if (shuttingDown) return;
  } else {
    replicaPorts.forEach((replicaPort, index) => startWeb(replicaCount > 1 ? `web-${index + 1}` : "web", replicaPort));
  }
  if (replicaCount > 1) supervisor.start(haproxyChild(clusterConfig!.dir, { port, replicaPorts }));

  // Over HTTP a worker reaches the coordinator through the web app, and gets no database URL.
  const workerEnv: Record<string, string> =
    workerTransport === "http"
      ? { NEXT_TELEMETRY_DISABLED: "1", DATABASE_URL: "", FENCELINE_WORKER_TRANSPORT: "http", FENCELINE_COORDINATOR_URL: `http://127.0.0.1:${port}`, FENCELINE_WORKER_TOKEN: workerToken }
      : { ...childEnv, FENCELINE_WORKER_TRANSPORT: "direct" };
  log("start", `workers use the ${workerTransport} transport`);
  for (let index = 1; index <= workerCount; index += 1) {
    supervisor.start({
      name: `worker-${index}`,
      command: process.execPath,
      args: ["--import", "tsx", workerEntry],
      env: { ...workerEnv, FENCELINE_DESTINATION_URL: destinationUrl, FENCELINE_PROCESS: `fenceline-worker-${index}` },
      cwd: root,
      restart: true,
    });
  }

  // Relays reach the database themselves: the outbox and the deliveries' leases live there.
  for (let index = 1; index <= relayCount; index += 1) {
    supervisor.start({
      name: `relay-${index}`,
      command: process.execPath,
      args: ["--import", "tsx", relayEntry],
      env: { ...childEnv, FENCELINE_PROCESS: `fenceline-relay-${index}` },
      cwd: root,
      restart: true,
    });
  }

  if (demo === "on") {
    // One-shot: with FENCELINE_DEMO_RATE=0 it installs the fault mix and exits 0.
    supervisor.start({
      name: "demo-traffic",
      command: process.execPath,
      args: ["--import", "tsx", demoTrafficEntry],
      env: {
        NEXT_TELEMETRY_DISABLED: "1",
        FENCELINE_DESTINATION_URL: destinationUrl,
        FENCELINE_URL: `http://127.0.0.1:${port}`,
        FENCELINE_API_KEY: appKey,
        FENCELINE_PROCESS: "fenceline-demo-traffic",
      },
      cwd: root,
      oneShot: true,
    });
  }

  const url = `http://127.0.0.1:${port}`;
  if (replicaCount > 1) for (const replicaPort of replicaPorts) await waitForHealth(`http://127.0.0.1:${replicaPort}/api/health`);
  await waitForHealth(`${url}/api/health`);
  if (shuttingDown) return;
  {
    if (replicaCount > 1) log("start", `${replicaCount} web replicas on ports ${replicaPorts.join(", ")} behind haproxy (round robin) at ${url}/`);
    log("start", `Fenceline is running at ${url}/ (${supervisor.names().join(", ")})`);
    if (staged) log("start", `the requests API and the worker protocol answer at ${url}/ now; the dashboard is building (next build) and will be served at the same URL when it is ready`);
    else log("start", `the dashboard is ready at ${url}/`);
    for (const account of demoAccounts) log("start", `demo sign-in (${account.roles.join(", ")}): ${account.email} / ${account.password}`);
    log("start", `synthetic destination service at ${destinationUrl} (faults: PUT ${destinationUrl}/admin/faults, audit: GET ${destinationUrl}/admin/audit)`);
    if (demo !== "off") {
      log("start", "to run your own workflows against it (examples/quickstart), paste these three lines into your shell:");
      for (const line of [`FENCELINE_URL=${url}`, `FENCELINE_WORKER_TOKEN=${workerToken}`, `FENCELINE_API_KEY=${appKey}`]) process.stdout.write(`export ${line}
`);
    }
  }

  if (staged && dashboardPort) {
    const builtAt = performance.now();
    if (!(await buildWhenStale(childEnv))) return;
    startWeb("web", dashboardPort);
    await waitForHealth(`http://127.0.0.1:${dashboardPort}/api/health`);
    if (!shuttingDown) log("start", `the dashboard is ready at ${url}/ (built and started in ${Math.round((performance.now() - builtAt) / 1000)} s)`);
  }
}

/** Runs `next build` when the build is missing or older than a source; false when it failed or we are stopping. */
async function buildWhenStale(env: Record<string, string>): Promise<boolean> {
  if (!buildIsStale()) return true;
  const release = await acquireBuildLock(path.join(root, ".next-build.lock"), () => shuttingDown, (pid) =>
    log("start", `waiting for another build of this checkout (pid ${pid}) to finish`),
  );
  if (!release) return false;
  try {
    // The build waited for may have made this one unnecessary.
    if (buildIsStale()) {
      log("start", "building the dashboard (next build)");
      const build = supervisor.start({ name: "build", command: process.execPath, args: [nextBin, "build"], env, cwd: root, oneShot: true });
      if ((await build.exited).code !== 0) return false; // reported by onUnexpectedExit
    }
    return !shuttingDown;
  } finally {
    release();
  }
}

/** A build is needed when there is none, or any source file is newer than it. */
function buildIsStale(): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return true;
  const builtAt = statSync(buildId).mtimeMs;
  const sources = ["app", "components", "lib", "public", "proxy.ts", "next.config.ts", "tsconfig.json", "package-lock.json"];
  return sources.some((source) => newerThan(path.join(root, source), builtAt));
}

function newerThan(file: string, time: number): boolean {
  if (!existsSync(file)) return false;
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs > time && !/\.test\.tsx?$/.test(file);
  // A nested package's install (lib/bench/peers) is no source of the web app.
  return readdirSync(file).some((entry) => entry !== "node_modules" && newerThan(path.join(file, entry), time));
}

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (!shuttingDown) {
    const response = await fetch(url).catch(() => undefined);
    if (response?.ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${HEALTH_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

main().catch((error: unknown) => void shutdown(1, `failed: ${describeFailure(error)}`));
