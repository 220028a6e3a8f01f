/**
 * The metric families in the Prometheus text exposition format (0.0.4). Counters are totals
 * over all recorded history (the same statements as the series, over one bucket spanning it);
 * durations are exported as gauges of their statistic; levels as gauges. Metric names carry the
 * family (`fenceline_churn_…`, `fenceline_uncertainty_…`, `fenceline_waits_…`) so no dashboard sums
 * them together.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { METRICS, type MetricDefinition } from "./definitions";
import { fairShareExposition } from "./fair-share";
import { readMetricRows } from "./series";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** All history: from the epoch to a moment past now, as one bucket. */
const ALL_TIME_FROM = new Date(0);
const ALL_TIME_BUCKET_SECONDS = 100 * 365 * 24 * 60 * 60;

export type MetricTotals = ReadonlyMap<string, ReadonlyMap<string, number | null>>;

export function metricName(metric: MetricDefinition): string {
  const base = `fenceline_${metric.family}_${metric.id}`;
  if (metric.kind === "count") return `${base}_total`;
  if (metric.kind === "seconds") return `${base}_seconds`;
  return base;
}

const escapeHelp = (text: string) => text.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
const escapeLabel = (text: string) => text.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');

function formatValue(value: number | null): string {
  if (value === null || Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** Renders totals per metric and key. Pure, so the format is tested without a database. */
export function renderExposition(totals: MetricTotals, metrics: readonly MetricDefinition[] = METRICS): string {
  const lines: string[] = [];
  for (const metric of metrics) {
    const name = metricName(metric);
    const values = totals.get(metric.id) ?? new Map<string, number | null>();
    lines.push(`# HELP ${name} ${escapeHelp(`${metric.title} (${metric.unit}). ${metric.definition}`)}`);
    lines.push(`# TYPE ${name} ${metric.kind === "count" ? "counter" : "gauge"}`);
    const keys = [...metric.keys, ...[...values.keys()].filter((key) => !metric.keys.includes(key))];
    for (const key of keys) {
      // A statistic over no events has no value: leave the sample out rather than invent one.
      const value = values.get(key) ?? (metric.kind === "count" ? 0 : null);
      if (value === null && metric.kind === "seconds") continue;
      const labels = metric.label ? `{${metric.label}="${escapeLabel(key)}"}` : "";
      lines.push(`${name}${labels} ${formatValue(value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export async function readTotals(pool: StaffReadable, now = new Date()): Promise<MetricTotals> {
  const to = new Date(now.getTime() + 1000);
  const rows = await readMetricRows(pool, METRICS, ALL_TIME_FROM, to, ALL_TIME_BUCKET_SECONDS);
  return new Map(
    METRICS.map((metric) => {
      const totals = rows.get(metric.id)!.filter((row) => row.bucket === null).map((row) => [row.key, row.value] as const);
      return [metric.id, new Map(totals)] as const;
    }),
  );
}

/** The families, then fair share's levels (lib/metrics/fair-share.ts). */
export async function prometheusExposition(pool: StaffReadable): Promise<string> {
  const [totals, fairShare] = await Promise.all([readTotals(pool), fairShareExposition(pool)]);
  return renderExposition(totals) + fairShare;
}
