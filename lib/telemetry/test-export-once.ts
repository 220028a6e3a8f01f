/**
 * A process that traces one span and exits (lib/telemetry/protocol.scenario.test.ts): tracing
 * starts from this process's OTEL_* variables as in every Fenceline process, one
 * `fenceline.request` span is written under the traceparent given as the first argument, and
 * the SDK is stopped, which exports it.
 */
import { SPAN_NAMES, tracer } from "./spans";
import { startTelemetry, stopTelemetry } from "./start";
import { contextOfTraceParent } from "./trace-context";

await startTelemetry({ serviceName: "export-once" });
tracer.startSpan(SPAN_NAMES.request, undefined, contextOfTraceParent(process.argv[2])).end();
await stopTelemetry();
