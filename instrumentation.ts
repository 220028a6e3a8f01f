/**
 * Next.js calls register() once when the web app's server starts: tracing starts there when
 * OTEL_* asks for it (docs/operating/tracing.md), so the app's requests.create, the worker
 * protocol and the recovery decisions it makes emit spans. Nothing is loaded otherwise.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startTelemetry } = await import("./lib/telemetry/start");
  // Next.js keeps its own AsyncLocalStorage per request already: the active context costs little here.
  await startTelemetry({ serviceName: "fenceline-web", activeContext: true });
}
