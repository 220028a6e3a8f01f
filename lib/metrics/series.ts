/** Time-bucketed series for every metric family over a bounded range. */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { MAX_METRIC_BUCKETS, MAX_METRIC_RANGE_DAYS, METRIC_BUCKETS, type MetricBucket, type MetricSeries, type Metrics } from "@/lib/api/contract/engineer/metrics";
import { run } from "@/lib/engine/db";
import { METRICS, type MetricDefinition } from "./definitions";
import { InvalidMetricsRangeError } from "./errors";

const DEFAULT_RANGE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export type MetricsRange = { readonly from: Date; readonly to: Date; readonly bucket: MetricBucket };

/** Fills defaults (the last hour) and refuses an empty, reversed or unbounded range. */
export function resolveRange(input: { from?: string; to?: string; bucket: MetricBucket }, now = new Date()): MetricsRange {
  const to = input.to ? new Date(input.to) : now;
  const from = input.from ? new Date(input.from) : new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (from >= to) throw new InvalidMetricsRangeError("`from` must be before `to`");
  const spanMs = to.getTime() - from.getTime();
  if (spanMs > MAX_METRIC_RANGE_DAYS * DAY_MS) throw new InvalidMetricsRangeError(`a range spans at most ${MAX_METRIC_RANGE_DAYS} days`);
  const buckets = Math.ceil(spanMs / (METRIC_BUCKETS[input.bucket] * 1000));
  if (buckets > MAX_METRIC_BUCKETS) {
    throw new InvalidMetricsRangeError(`${buckets} buckets of ${input.bucket}: at most ${MAX_METRIC_BUCKETS}; choose a wider bucket`);
  }
  return { from, to, bucket: input.bucket };
}

type Row = { bucket: Date | null; key: string; value: number | null };

export async function readMetric(pool: StaffReadable, metric: MetricDefinition, from: Date, to: Date, bucketSeconds: number): Promise<Row[]> {
  return run<Row>(pool, metric.statement, [from, to, `${bucketSeconds} seconds`]);
}

/** Every metric's rows, by metric id, running each distinct statement once. */
export async function readMetricRows(
  pool: StaffReadable,
  metrics: readonly MetricDefinition[],
  from: Date,
  to: Date,
  bucketSeconds: number,
): Promise<Map<string, Row[]>> {
  const reads = new Map<MetricDefinition["statement"], Promise<Row[]>>();
  for (const metric of metrics) {
    if (!reads.has(metric.statement)) reads.set(metric.statement, readMetric(pool, metric, from, to, bucketSeconds));
  }
  const entries = await Promise.all(
    metrics.map(async (metric) => {
      const rows = await reads.get(metric.statement)!;
      const shared = metrics.some((other) => other !== metric && other.statement === metric.statement);
      return [metric.id, shared ? rows.filter((row) => metric.keys.includes(row.key)) : rows] as const;
    }),
  );
  return new Map(entries);
}

function toSeries(metric: MetricDefinition, rows: readonly Row[], range: MetricsRange, bucketSeconds: number): MetricSeries {
  const keys = [...metric.keys, ...new Set(rows.map((row) => row.key).filter((key) => !metric.keys.includes(key)))];
  const empty = metric.kind === "count" ? 0 : null;
  const points: MetricSeries["points"] = [];
  const index = new Map<number, Record<string, number | null>>();
  for (let at = range.from.getTime(); at < range.to.getTime(); at += bucketSeconds * 1000) {
    const values = Object.fromEntries(keys.map((key) => [key, empty]));
    index.set(at, values);
    points.push({ at: new Date(at).toISOString(), values });
  }
  const total: Record<string, number | null> = Object.fromEntries(keys.map((key) => [key, empty]));
  for (const row of rows) {
    if (row.bucket === null) total[row.key] = row.value;
    else {
      const values = index.get(row.bucket.getTime());
      if (values) values[row.key] = row.value;
    }
  }
  return {
    id: metric.id,
    family: metric.family,
    title: metric.title,
    unit: metric.unit,
    definition: metric.definition,
    listHref: metric.list?.({ from: range.from.toISOString(), to: range.to.toISOString() }) ?? null,
    keyHrefs: Object.fromEntries(
      keys.flatMap((key) => {
        const href = metric.keyList?.(key, { from: range.from.toISOString(), to: range.to.toISOString() });
        return href ? [[key, href]] : [];
      }),
    ),
    keys,
    points,
    total,
  };
}

export async function readMetrics(pool: StaffReadable, range: MetricsRange): Promise<Metrics> {
  const bucketSeconds = METRIC_BUCKETS[range.bucket];
  const rows = await readMetricRows(pool, METRICS, range.from, range.to, bucketSeconds);
  const series = METRICS.map((metric) => toSeries(metric, rows.get(metric.id)!, range, bucketSeconds));
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    bucket: range.bucket,
    bucketSeconds,
    churn: series.filter((s) => s.family === "churn"),
    uncertainty: series.filter((s) => s.family === "uncertainty"),
    waits: series.filter((s) => s.family === "waits"),
  };
}
