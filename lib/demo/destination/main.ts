/**
 * Runs the synthetic destination service as its own process:
 *
 *   node --import tsx lib/demo/destination/main.ts
 *
 * DESTINATION_DATABASE_URL (or DATABASE_URL) names the database whose `destination` schema holds
 * its state; DESTINATION_PORT (default 4100) is the loopback port. The ready line is what a
 * supervisor or harness waits for.
 */
import { startDestinationService } from "./service";
import { integerFromEnv } from "@/lib/env";

const DEFAULT_PORT = 4100;

const databaseUrl = process.env.DESTINATION_DATABASE_URL ?? process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("[destination] DESTINATION_DATABASE_URL (or DATABASE_URL) is not set");
  process.exit(1);
}
// 0 asks the system for a free port.
const port = integerFromEnv("DESTINATION_PORT", DEFAULT_PORT, { min: 0, max: 65_535 });

const service = await startDestinationService({ databaseUrl, port });
console.log(`FENCELINE_DESTINATION_READY ${service.url}`);

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  try {
    await service.close();
    process.exit(0);
  } catch (error) {
    console.error(`[destination] stop failed: ${String(error)}`);
    process.exit(1);
  }
}
process.on("SIGTERM", (signal) => void stop(signal));
process.on("SIGINT", (signal) => void stop(signal));
