/**
 * `npm run request [name]`: creates one `welcome` request through the client, waits until it
 * ends, and prints one JSON line: its id, its tracking URL (the page to send your customer) and
 * its status. The workflow's type arrives by `import type`: this script never loads the worker's
 * code, yet the compiler checks the input against the workflow's schema.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "fenceline/client";
import { required } from "./env.js";
import type { welcome } from "./workflow.js";

// Bound once to the workflows this backend starts: every create below is checked against them.
const fenceline = createClient<typeof welcome>({ url: required("FENCELINE_URL"), apiKey: required("FENCELINE_API_KEY") });

const name = process.argv[2] ?? "Ada";
// One key per intent: sending this create again (say, after a lost answer) finds the same request.
const request = await fenceline.requests.create("welcome", { name }, { idempotencyKey: `welcome-${randomUUID()}` });
console.error(`created ${request.id}; follow it at ${request.trackingUrl}`);
console.error(`or on your own page (npm run page): http://127.0.0.1:${process.env.PAGE_PORT ?? 4400}/?token=${request.trackingToken}`);

const ended = await fenceline.requests.waitForEnd(request.id, { timeoutMs: 120_000 });
console.log(JSON.stringify({ requestId: ended.id, trackingUrl: ended.trackingUrl, status: ended.status }));
process.exitCode = ended.status === "completed" ? 0 : 1;
