/**
 * `fenceline/worker`: run your workflows' steps in your own process.
 *
 * A worker registers the workflow versions it serves (with their adapters' contracts) when it
 * starts, claims their ready steps, runs their handlers with bounded concurrency, renews its
 * leases, commits receipts, and takes part in recovery. It reaches Fenceline over HTTP with a
 * worker token: no database credentials on your machines.
 *
 * @packageDocumentation
 * @module fenceline/worker
 */
export { createWorker, runWorker } from "@/lib/worker/http-worker";
export type { FencelineWorker, WorkerOptions } from "@/lib/worker/http-worker";
export { DefinitionConflictError, InvalidDefinitionError } from "@/lib/engine/errors";
export { WorkerTransportError } from "@/lib/worker/http-coordinator";
