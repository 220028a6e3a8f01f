/**
 * `npm run worker`: starts the payment service on loopback, then a Fenceline worker for the
 * `order` workflow. The worker talks to Fenceline over HTTP with a worker token: it never sees a
 * database credential. While an order waits for the warehouse or its timer, it holds nothing of
 * this worker. Ctrl-C stops it gracefully.
 */
import { runWorker } from "fenceline/worker";
import { required } from "./env.js";
import { startPaymentService } from "./payments.js";
import { parcel, shipment } from "./shipment.js";
import { order, PAYMENTS_URL, stockCount } from "./workflow.js";

const url = required("FENCELINE_URL");
const token = required("FENCELINE_WORKER_TOKEN");

const service = await startPaymentService(Number(new URL(PAYMENTS_URL).port));
console.log(`payment service at ${service.url} (GET ${service.url}/charges lists its charges)`);

const worker = await runWorker({ url, token, workflows: [order, shipment, parcel, stockCount] });
console.log(`worker ${worker.sessionId} serves ${[order, shipment, parcel, stockCount].map((w) => `${w.kind}@${w.version}`).join(", ")}; Ctrl-C stops it`);
