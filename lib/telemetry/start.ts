/**
 * Starts tracing in a Fenceline process (the web app, the protocol server, a worker) from the
 * standard OTEL_* variables, and only then loads the SDK: with them unset, this module costs one
 * check of the environment and the processes run on `@opentelemetry/api`'s no-ops.
 */
import { tracingRequested } from "./config";
import type { SdkOptions, StartedSdk } from "./sdk";
import { markTracingActive } from "./spans";

let started: Promise<StartedSdk | null> | null = null;

/**
 * Starts the SDK once per process when OTEL_* asks for traces; resolves to null when it does not,
 * or when another tracer provider (an adopter's own) was registered first, which is then used.
 * `serviceName` is service.name unless OTEL_SERVICE_NAME says otherwise.
 */
export function startTelemetry(options: SdkOptions, env: NodeJS.ProcessEnv = process.env): Promise<StartedSdk | null> {
  if (started) return started;
  if (!tracingRequested(env) && options.spanProcessors === undefined) return Promise.resolve(null);
  started = import("./sdk").then(({ startSdk }) => {
    const sdk = startSdk({ ...options, activeContext: options.activeContext ?? env.FENCELINE_TRACE_ACTIVE_CONTEXT === "1" });
    if (sdk) markTracingActive(true);
    return sdk;
  });
  return started;
}

/** Exports buffered spans and stops the SDK, if this process started one. Call before exiting. */
export async function stopTelemetry(): Promise<void> {
  const sdk = await started;
  started = null;
  markTracingActive(false);
  await sdk?.shutdown();
}

/** Exports buffered spans now, if this process started the SDK. */
export async function flushTelemetry(): Promise<void> {
  await (await started)?.flush();
}
