/**
 * `npm run demo:traffic`: installs the demo fault mix at the synthetic destination, then creates
 * `delivery` requests through the public client until SIGTERM or SIGINT. `npm start` runs it
 * when FENCELINE_DEMO is on (its default).
 *
 * Environment: FENCELINE_URL and FENCELINE_API_KEY (the web app and an app key that may create
 * requests; npm start passes both); FENCELINE_DESTINATION_URL (where to install the fault mix; unset
 * leaves the destination's faults as they are); FENCELINE_DEMO_RATE (requests per minute,
 * default 12, 0 creates none); FENCELINE_DEMO_MIX (deliverVia weights, default
 * idempotent=6,queryable=3,opaque=1); FENCELINE_DEMO_FAULTS (none | mild | chaos, default mild).
 */
import { createClient } from "fenceline/client";
import { applyFaultMix, parseFaultMix } from "@/lib/demo/faults";
import { formatDeliveryMix, parseDeliveryMix, startDemoTraffic } from "@/lib/demo/traffic";
import { integerFromEnv, requiredEnv } from "@/lib/env";
import { command, exit, setting } from "./command";

command({
  name: "npm run demo:traffic",
  summary: "installs the demo fault mix at the synthetic destination, then creates `delivery` requests through the public client until SIGTERM or SIGINT (npm start runs it when FENCELINE_DEMO is on, its default).",
  options: {},
  environment: [
    { name: "FENCELINE_DESTINATION_URL", default: "none: the destination's faults are left as they are", description: "where to install the fault mix" },
    { name: "FENCELINE_DEMO_RATE", default: "12", description: "requests per minute; 0 creates none" },
    { name: "FENCELINE_DEMO_MIX", default: "idempotent=6,queryable=3,opaque=1", description: "deliverVia weights" },
    { name: "FENCELINE_DEMO_FAULTS", default: "mild", description: "none, mild or chaos" },
    { name: "FENCELINE_URL", description: "the web app (npm start sets it)" },
    { name: "FENCELINE_API_KEY", description: "an app key with the requests:create scope (npm start prints one)" },
  ],
  examples: ["FENCELINE_URL=http://127.0.0.1:3000 FENCELINE_API_KEY=fl_app_… FENCELINE_DEMO_RATE=60 npm run demo:traffic"],
});

const rate = integerFromEnv("FENCELINE_DEMO_RATE", 12, { min: 0, max: 60_000 });
const mix = setting(() => parseDeliveryMix(process.env.FENCELINE_DEMO_MIX));
const faults = setting(() => parseFaultMix(process.env.FENCELINE_DEMO_FAULTS));
const destinationUrl = process.env.FENCELINE_DESTINATION_URL;

if (destinationUrl) {
  await applyFaultMix(destinationUrl, faults);
  console.log(`fault mix ${faults} installed at ${destinationUrl}`);
} else {
  console.log("FENCELINE_DESTINATION_URL is not set: the destination's faults are left as they are");
}

if (rate === 0) {
  console.log("FENCELINE_DEMO_RATE=0: creating no demo traffic");
  await exit(0);
}

const client = createClient({
  url: requiredEnv("FENCELINE_URL", "npm start sets it to the web app"),
  apiKey: requiredEnv("FENCELINE_API_KEY", "an app key that may create requests; npm start sets it"),
});
const traffic = startDemoTraffic({ client, ratePerMinute: rate, mix });
console.log(`demo traffic: ${rate} requests per minute, mix ${formatDeliveryMix(mix)}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await traffic.stop();
  console.log(`${signal}: stopped after creating ${traffic.created()} requests`);
  await exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
// Only now: whoever waits for this line may stop the traffic at once.
console.log(`demo traffic: ${rate} requests per minute, mix ${formatDeliveryMix(mix)}`);
