/**
 * `npm run demo:traffic`: installs the demo fault mix at the synthetic destination, then creates
 * `delivery` workflows until SIGTERM or SIGINT. `npm start` runs it unless FENCELINE_DEMO=0.
 *
 * Environment: DATABASE_URL; FENCELINE_DESTINATION_URL (where to install the fault mix; unset
 * leaves the destination's faults as they are); FENCELINE_DEMO_RATE (requests per minute,
 * default 12, 0 creates none); FENCELINE_DEMO_MIX (deliverVia weights, default
 * idempotent=6,queryable=3,opaque=1); FENCELINE_DEMO_FAULTS (none | mild | chaos, default mild).
 */
import { createPool, databaseUrl, processName } from "@/lib/db/pool";
import { applyFaultMix, parseFaultMix } from "@/lib/demo/faults";
import { formatDeliveryMix, parseDeliveryMix, startDemoTraffic } from "@/lib/demo/traffic";
import { integerFromEnv } from "@/lib/env";

const rate = integerFromEnv("FENCELINE_DEMO_RATE", 12, { min: 0, max: 60_000 });
const mix = parseDeliveryMix(process.env.FENCELINE_DEMO_MIX);
const faults = parseFaultMix(process.env.FENCELINE_DEMO_FAULTS);
const destinationUrl = process.env.FENCELINE_DESTINATION_URL;

if (destinationUrl) {
  await applyFaultMix(destinationUrl, faults);
  console.log(`fault mix ${faults} installed at ${destinationUrl}`);
} else {
  console.log("FENCELINE_DESTINATION_URL is not set: the destination's faults are left as they are");
}

if (rate === 0) {
  console.log("FENCELINE_DEMO_RATE=0: creating no demo traffic");
  process.exit(0);
}

const pool = createPool(databaseUrl(), { applicationName: processName(), max: 2 });
const traffic = startDemoTraffic({ pool, ratePerMinute: rate, mix });
console.log(`demo traffic: ${rate} requests per minute, mix ${formatDeliveryMix(mix)}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await traffic.stop();
  console.log(`${signal}: stopped after creating ${traffic.created()} requests`);
  await pool.end();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
