/**
 * A worker for the adopter's own process, over the HTTP worker protocol: the public face of the
 * worker runtime (lib/worker/worker.ts) with the HTTP transport (lib/worker/http-coordinator.ts).
 */
import type { WorkflowDefinition } from "@/lib/definitions/workflow";
import { httpCoordinator, WorkerTransportError } from "./http-coordinator";
import { Worker } from "./worker";

/** How a worker reaches Fenceline, what it serves, and how busy it may get. */
export type WorkerOptions = {
  /** Fenceline's base URL, e.g. `process.env.FENCELINE_URL` (`http://127.0.0.1:3000`). */
  readonly url: string;
  /** A worker token, e.g. `process.env.FENCELINE_WORKER_TOKEN`; an admin creates it on /admin. */
  readonly token: string;
  /** The workflow versions this worker serves. */
  readonly workflows: readonly WorkflowDefinition[];
  /** Attempts run at once. @defaultValue 10 */
  readonly concurrency?: number;
  /** Longest wait for new work between wake-ups, in ms. @defaultValue 1000 */
  readonly pollIntervalMs?: number;
  /** How often this worker takes part in recovering expired leases, in ms. @defaultValue 1000 */
  readonly recoveryIntervalMs?: number;
  /** How long stop() lets running attempts finish before giving up on them, in ms. @defaultValue 10000 */
  readonly shutdownTimeoutMs?: number;
  /** How long one call to Fenceline may take, in ms. @defaultValue 10000 */
  readonly requestTimeoutMs?: number;
  /** Where the worker reports what it could not do itself (a refused renewal, a failed call). @defaultValue a line on stderr */
  readonly log?: (line: string) => void;
};

/** A running worker, made by {@link createWorker}. */
export type FencelineWorker = {
  /**
   * Registers the session and its definitions, then claims and runs steps until stop(). Throws
   * DefinitionConflictError when a kind and version is already registered with another shape
   * (register the change as a new version), and WorkerTransportError when Fenceline cannot be
   * reached or refuses the token.
   */
  start(): Promise<string>;
  /**
   * Graceful stop: no more claims; work whose invocation has not begun is handed back; the rest
   * gets `shutdownTimeoutMs` to finish. Whatever is left is recovered from evidence after its
   * lease expires, so correctness never depends on this running.
   */
  stop(reason?: string): Promise<void>;
  /** The session id, once started. */
  readonly sessionId: string;
  /** Attempts running now. */
  readonly active: number;
};

/** A worker over HTTP. Throws DefinitionError when the workflows cannot be served together. */
export function createWorker(options: WorkerOptions): FencelineWorker {
  const worker = new Worker({
    coordinator: httpCoordinator({ baseUrl: options.url, token: options.token, timeoutMs: options.requestTimeoutMs }),
    workflows: options.workflows,
    concurrency: options.concurrency,
    pollIntervalMs: options.pollIntervalMs,
    recoveryIntervalMs: options.recoveryIntervalMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs,
    log: options.log,
  });
  return {
    start: () => worker.start(),
    stop: (reason) => worker.stop(reason),
    get sessionId() {
      return worker.sessionId;
    },
    get active() {
      return worker.active;
    },
  };
}

export type RunWorkerOptions = WorkerOptions & {
  /** How long to keep trying while Fenceline does not answer yet (it may still be starting), in ms. @defaultValue 60000 */
  readonly connectTimeoutMs?: number;
};

/**
 * Starts a worker and keeps it running until SIGTERM or SIGINT, then stops it gracefully and
 * exits. While Fenceline does not answer it retries for `connectTimeoutMs`; a refusal (a wrong
 * token, a definition conflict) is final.
 *
 * @example
 * ```ts
 * import { runWorker } from "fenceline/worker";
 * import { checkout } from "./workflows";
 *
 * await runWorker({ url: process.env.FENCELINE_URL!, token: process.env.FENCELINE_WORKER_TOKEN!, workflows: [checkout] });
 * ```
 */
export async function runWorker(options: RunWorkerOptions): Promise<FencelineWorker> {
  const worker = createWorker(options);
  const log = options.log ?? ((line: string) => process.stderr.write(`[fenceline worker] ${line}\n`));
  const giveUpAt = Date.now() + (options.connectTimeoutMs ?? 60_000);
  for (let delayMs = 250; ; delayMs = Math.min(2_000, delayMs * 2)) {
    try {
      await worker.start();
      break;
    } catch (error) {
      const refused = !(error instanceof WorkerTransportError) || (error.status !== null && error.status < 500);
      if (refused || Date.now() + delayMs > giveUpAt) throw error;
      log(`Fenceline is not answering yet (${error.message}); trying again`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void worker.stop(signal).finally(() => process.exit(0));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return worker;
}
