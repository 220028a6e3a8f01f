/** Metrics in families that are never summed together: lease churn, outcome uncertainty, and waits. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { operation, timestamp } from "../common";

export const METRIC_BUCKETS = { "1m": 60, "5m": 300, "15m": 900, "1h": 3600, "1d": 86_400 } as const;
export type MetricBucket = keyof typeof METRIC_BUCKETS;
/** At most this many buckets per series: a range too long for its bucket is refused. */
export const MAX_METRIC_BUCKETS = 1_440;
/** The widest range one request may read. */
export const MAX_METRIC_RANGE_DAYS = 31;

export const metricsQuery = z
  .strictObject({
    from: timestamp.optional().meta({ description: "Range start (default: one hour before `to`)" }),
    to: timestamp.optional().meta({ description: "Range end (default: now)" }),
    bucket: z.enum(Object.keys(METRIC_BUCKETS) as [MetricBucket, ...MetricBucket[]]).default("1m"),
  })
  .meta({ id: "MetricsQuery" });
export type MetricsQuery = z.output<typeof metricsQuery>;

export const metricSeriesSchema = z
  .object({
    id: z.string(),
    family: z.enum(["churn", "uncertainty", "waits"]),
    title: z.string(),
    unit: z.string(),
    definition: z.string(),
    /** The filtered list behind this metric, for drilling down. */
    listHref: z.string().nullable(),
    /** Per series key, the filtered list behind that series, where one exists. */
    keyHrefs: z.record(z.string(), z.string()),
    keys: z.array(z.string()),
    points: z.array(z.object({ at: timestamp, values: z.record(z.string(), z.number().nullable()) })),
    /** One figure per key over the whole range (a sum, or for durations the value over all events). */
    total: z.record(z.string(), z.number().nullable()),
  })
  .meta({ id: "MetricSeries" });
export type MetricSeries = z.output<typeof metricSeriesSchema>;

export const metricsSchema = z
  .object({
    from: timestamp,
    to: timestamp,
    bucket: z.string(),
    bucketSeconds: z.number().int(),
    churn: z.array(metricSeriesSchema),
    uncertainty: z.array(metricSeriesSchema),
    waits: z.array(metricSeriesSchema).meta({ description: "Steps waiting by kind, events by outcome, timer lateness" }),
  })
  .meta({ id: "Metrics", description: "Time-bucketed series in families that are never summed together" });
export type Metrics = z.output<typeof metricsSchema>;

export const metricsPaths: ZodOpenApiPathsObject = {
  "/api/metrics": {
    get: operation({
      id: "getMetrics",
      summary: "Lease churn, outcome uncertainty and waits, as time series",
      tag: "engineer",
      query: metricsQuery,
      ok: { description: "Each family", schema: metricsSchema },
      problems: { "400": "Invalid or unbounded range" },
    }),
  },
  "/api/metrics/prometheus": {
    get: {
      ...operation({
        id: "getPrometheusMetrics",
        summary: "Every family in Prometheus text exposition format 0.0.4",
        description:
          "For a Prometheus server with a scrape token (`Authorization: Bearer fl_scrape_…`, created by an admin), or an engineer signed in. " +
          "A request that presents a bearer credential is judged by it alone: 401 unless it is an unrevoked scrape token.",
        tag: "engineer",
        ok: { description: "Exposition text", schema: z.string(), mediaType: "text/plain; version=0.0.4" },
      }),
      security: [{ scrapeToken: [] }, { staffSession: [] }],
    },
  },
};
