/**
 * `npm run protocol-server`: the HTTP worker protocol on a plain node:http server
 * (workerProtocolListener), apart from the web app. Workers pointed at it
 * (FENCELINE_COORDINATOR_URL) get the same operations, tokens and answers as through the web
 * app's /api/worker routes, without Next's Request/Response objects on every exchange: the
 * benchmark's protocol server is this listener (decision 007). Several may run behind a load
 * balancer; each needs the database.
 */
import { createServer } from "node:http";
import { closeWorkerProtocol, workerProtocolListener } from "@/lib/api/worker-protocol";
import { createPool, directDatabaseUrl, processName } from "@/lib/db/pool";
import { integerFromEnv } from "@/lib/env";
import { startTelemetry, stopTelemetry } from "@/lib/telemetry/start";
import { command, DATABASE_ENVIRONMENT, exit, resolveAppDatabase } from "./command";

command({
  name: "npm run protocol-server",
  summary: "serves the HTTP worker protocol (POST /api/worker/<operation>) on its own port, until SIGTERM or SIGINT.",
  options: {},
  environment: [
    { name: "FENCELINE_PROTOCOL_PORT", default: "3100", description: "the port to listen on (0: any free one)" },
    { name: "FENCELINE_PROTOCOL_HOST", default: "127.0.0.1", description: "the address to listen on" },
    { name: "FENCELINE_PROTOCOL_POOL_MAX", default: "20", description: "database connections" },
    ...DATABASE_ENVIRONMENT,
  ],
  examples: ["FENCELINE_PROTOCOL_PORT=3100 npm run protocol-server"],
});

// Traces when OTEL_* asks for them (docs/operating/tracing.md): recovery decisions are made here.
await startTelemetry({ serviceName: "fenceline-protocol-server" });
const port = integerFromEnv("FENCELINE_PROTOCOL_PORT", 3100, { min: 0, max: 65_535 });
const host = process.env.FENCELINE_PROTOCOL_HOST || "127.0.0.1";
const poolMax = integerFromEnv("FENCELINE_PROTOCOL_POOL_MAX", 20, { min: 1 });
const pool = createPool((await resolveAppDatabase()).url, { applicationName: processName(), max: poolMax, sessionConnectionString: directDatabaseUrl() });
// Idle keep-alive connections stay open longer than a worker's longest wait between exchanges.
const server = createServer({ keepAliveTimeout: 65_000 }, workerProtocolListener(pool));
await new Promise<void>((resolve) => server.listen(port, host, resolve));
const address = server.address();
process.stdout.write(`FENCELINE_PROTOCOL_READY http://${host}:${typeof address === "object" && address ? address.port : port}\n`);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Long polls would hold close() open: their workers see a transport error and ask again elsewhere.
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await closeWorkerProtocol(pool);
  await pool.end();
  await stopTelemetry();
  await exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
