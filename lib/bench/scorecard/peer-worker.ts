/**
 * One scorecard worker process of a peer engine (graphile-worker, pg-boss or DBOS Transact),
 * started by the harness (lib/bench/scorecard/fleet.ts) with its settings as JSON in
 * SCORECARD_PEER_WORKER and the destination in FENCELINE_DESTINATION_URL. Its jobs make their one
 * call through the demo's own HTTP client for the destination (lib/demo/adapters.ts), so every
 * engine sends the same requests; a queryable destination is asked first whether the job's
 * request was applied, as a handler that must be idempotent would.
 *
 * stdout lines the harness waits on: `SCORECARD_WORKER_READY` once serving, and
 * `SCORECARD_CALLING <job> <term>` just before each effect request. SIGTERM or SIGINT stops it
 * gracefully.
 */
import { demoAdapters, type DestinationPayload } from "@/lib/demo/adapters";
import type { AdapterDefinition } from "fenceline";
import { startPeerWorker, type Delivery, type PeerWorkerOptions } from "./peers";

const raw = process.env.SCORECARD_PEER_WORKER;
const destinationUrl = process.env.FENCELINE_DESTINATION_URL;
if (!raw || !destinationUrl) throw new Error("SCORECARD_PEER_WORKER and FENCELINE_DESTINATION_URL are set by lib/bench/scorecard: this module is not run by hand");
const options = JSON.parse(raw) as PeerWorkerOptions;
const adapters = demoAdapters(destinationUrl);
const unaborted = new AbortController().signal;

const deliver: Delivery = async ({ data, key, term, signal = unaborted }) => {
  const adapter = adapters[data.contract] as AdapterDefinition<DestinationPayload & { resource: string }>;
  const { timeoutMs } = adapter.contract;
  if (adapter.query) {
    const status = await adapter.query({ requestIdentity: key, signal, timeoutMs });
    if (status.status === "applied") return;
  }
  console.log(`SCORECARD_CALLING ${data.n} ${term}`);
  // The job's key is its request identity everywhere: the idempotency key, the client reference,
  // the fenced destination's identity and resource.
  await adapter.invoke({ payload: { payload: data.payload, resource: key }, requestIdentity: key, epoch: 1n, fencingTerm: BigInt(term), signal, timeoutMs });
};

const stop = await startPeerWorker(options, deliver);
console.log("SCORECARD_WORKER_READY");

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void stop()
      .catch((error: unknown) => process.stderr.write(`[scorecard-worker] stop: ${String(error)}\n`))
      .finally(() => process.exit(0));
  });
}
