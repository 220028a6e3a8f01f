/**
 * `npm run worker`: starts the greeting card service on loopback, then a Fenceline worker for
 * the `welcome` workflow. The worker talks to Fenceline over HTTP with a worker token: it never
 * sees a database credential. Ctrl-C stops it gracefully.
 */
import { runWorker } from "fenceline/worker";
import { required } from "./env.js";
import { startGreetingService } from "./greetings.js";
import { GREETINGS_URL, welcome } from "./workflow.js";

const url = required("FENCELINE_URL");
const token = required("FENCELINE_WORKER_TOKEN");

const service = await startGreetingService(Number(new URL(GREETINGS_URL).port));
console.log(`greeting card service at ${service.url} (GET ${service.url}/cards lists what it sent)`);

const worker = await runWorker({ url, token, workflows: [welcome] });
console.log(`worker ${worker.sessionId} serves ${welcome.kind}@${welcome.version}; Ctrl-C stops it`);
