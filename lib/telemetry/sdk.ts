/**
 * The OpenTelemetry SDK, loaded only when tracing is asked for (lib/telemetry/start.ts imports
 * this module dynamically). A Node tracer provider configured the standard way: the sampler from
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (parent-based always-on by default), the resource
 * from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, batching from OTEL_BSP_*, and the exporters
 * from OTEL_TRACES_EXPORTER (`otlp`, the default, over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, with protobuf or JSON bodies as the protocol variables say;
 * `console`). W3C trace context
 * propagation is registered with it, and an AsyncLocalStorage context manager only where
 * `activeContext` asks for one: on Node 20 it hooks every promise, which in a worker cost more
 * than all of Fenceline's spans together (docs/benchmarks/tracing.md). Fenceline's own spans pass
 * their parents explicitly and need none.
 */
import { context, diag, DiagConsoleLogger, DiagLogLevel, propagation, ProxyTracerProvider, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { exportersOf, otlpProtocolOf } from "./config";

export type StartedSdk = {
  /** Exports what is buffered, then stops; spans started afterwards are dropped. */
  shutdown(): Promise<void>;
  /** Exports what is buffered. */
  flush(): Promise<void>;
};

export type SdkOptions = {
  /** service.name when OTEL_SERVICE_NAME does not give one. */
  readonly serviceName: string;
  /** Replaces the exporters OTEL_TRACES_EXPORTER names (the test collector's in-memory exporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
  /**
   * Registers an AsyncLocalStorage context manager, so `context.active()` follows async calls:
   * what the web app needs (Next.js continues the caller's trace in it), and what a worker needs
   * only for handlers and adapters that trace with instrumented libraries of their own
   * (FENCELINE_TRACE_ACTIVE_CONTEXT=1).
   */
  readonly activeContext?: boolean;
};

/** Starts and registers a tracer provider; null when another provider was registered first (the adopter's own SDK: it is used instead). */
export function startSdk(options: SdkOptions): StartedSdk | null {
  if (process.env.OTEL_LOG_LEVEL) diag.setLogger(new DiagConsoleLogger(), logLevelOf(process.env.OTEL_LOG_LEVEL));
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": options.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [...(options.spanProcessors ?? exportingProcessors())] });
  provider.register({ propagator: new W3CTraceContextPropagator(), ...(options.activeContext ? {} : { contextManager: null }) });
  // The adopter's provider, if one was registered first, stays: the API refuses a second one.
  const global = trace.getTracerProvider();
  if ((global instanceof ProxyTracerProvider ? global.getDelegate() : global) !== provider) {
    void provider.shutdown();
    return null;
  }
  return {
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
    flush: () => provider.forceFlush(),
  };
}

function exportingProcessors(): SpanProcessor[] {
  const names = exportersOf();
  const processors: SpanProcessor[] = [];
  for (const name of names.length === 0 ? ["otlp"] : names) {
    if (name === "otlp") processors.push(new BatchSpanProcessor(otlpExporter()));
    else if (name === "console") processors.push(new BatchSpanProcessor(new ConsoleSpanExporter()));
    else if (name !== "none") diag.warn(`OTEL_TRACES_EXPORTER names "${name}", which Fenceline does not ship: use otlp or console`);
  }
  return processors;
}

/** The OTLP/HTTP exporter for the configured protocol; gRPC is not shipped, and falls back to protobuf over HTTP with a warning. */
function otlpExporter() {
  const protocol = otlpProtocolOf();
  if (protocol === "http/json") return new JsonTraceExporter();
  if (protocol !== "http/protobuf") diag.warn(`OTEL_EXPORTER_OTLP_PROTOCOL is "${protocol}", which Fenceline does not ship: exporting with http/protobuf`);
  return new ProtobufTraceExporter();
}

function logLevelOf(value: string): DiagLogLevel {
  const level = DiagLogLevel[value.trim().toUpperCase() as keyof typeof DiagLogLevel];
  return typeof level === "number" ? level : DiagLogLevel.INFO;
}
