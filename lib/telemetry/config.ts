/**
 * Whether the standard OpenTelemetry variables ask for traces. Tracing is off unless an exporter
 * is named (OTEL_TRACES_EXPORTER other than `none`) or an OTLP endpoint is given
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED=true turns
 * it off whatever else is set. Off, no SDK module is loaded.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = exportersOf(env);
  if (exporters.length > 0) return !exporters.every((name) => name === "none");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** OTEL_TRACES_EXPORTER as a list: `otlp`, `console`, `none`. */
export function exportersOf(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
}

/**
 * The OTLP protocol for traces: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
 * else `http/protobuf`, the specification's default.
 */
export function otlpProtocolOf(env: NodeJS.ProcessEnv = process.env): string {
  return (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || "http/protobuf").toLowerCase();
}
