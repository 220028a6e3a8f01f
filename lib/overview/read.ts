/**
 * The staff overview, the "now" screen: requests in flight by what their customers see, open
 * review cases and the overdue among them, receipts in the last hour, workers alive, fenced
 * destinations left blocked, webhook endpoints failing for an hour, and the last hour of lease
 * churn beside outcome uncertainty. Every
 * figure carries the link to the filtered list behind it, built here beside the query that
 * counts it so the two cannot drift apart.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { run } from "@/lib/engine/db";
import { METRICS } from "@/lib/metrics/definitions";
import { readMetricRows } from "@/lib/metrics/series";
import { HEADLINES, IN_FLIGHT_HEADLINES, type InFlightHeadline } from "@/lib/projection/project";
import * as sql from "./sql";

/** The window of "receipts in the last hour" and of the two trend charts. */
export const OVERVIEW_WINDOW_MS = 60 * 60 * 1000;
const TREND_BUCKET_SECONDS = 5 * 60;

/** The metrics each chart shows, one line each: the families are never drawn on one chart. */
export const TREND_METRICS = {
  churn: ["lease_acquisitions", "lease_renewal_refusals", "lease_expiries", "lease_revocations"],
  uncertainty: ["steps_entering_unknown", "fencing_rejections", "late_observations"],
} as const;

export type Figure = { readonly count: number; readonly href: string };
export type TrendLine = { readonly id: string; readonly title: string; readonly total: number; readonly href: string | null };
export type Trend = {
  readonly lines: readonly TrendLine[];
  /** One row per 5-minute bucket: its start (ISO) and each line's count in it. */
  readonly points: readonly ({ at: string } & Record<string, number | string>)[];
};

export type Overview = {
  readonly at: string;
  readonly inFlight: readonly ({ headline: InFlightHeadline; label: string } & Figure)[];
  readonly inFlightTotal: Figure;
  readonly openReviews: Figure;
  readonly overdueReviews: Figure;
  readonly receiptsLastHour: Figure;
  readonly workersAlive: Figure;
  readonly blockedDestinations: readonly { adapter: string; epoch: string; reason: string; since: string; href: string }[];
  readonly failingEndpoints: readonly { id: string; url: string; since: string; href: string }[];
  readonly churn: Trend;
  readonly uncertainty: Trend;
  readonly metricsHref: string;
};

type FiguresRow = {
  db_now: Date;
  in_flight: Partial<Record<InFlightHeadline, number>>;
  open_reviews: number;
  overdue_reviews: number;
  receipts_last_hour: number;
  workers_alive: number;
  blocked_destinations: { adapter: string; epoch: string; reason: string; since: string }[];
  failing_endpoints: { id: string; url: string; since: string }[];
};

const list = (path: string, filter: Record<string, string>) => {
  const query = new URLSearchParams(filter).toString();
  return query ? `${path}?${query}` : path;
};

async function readTrend(pool: StaffReadable, ids: readonly string[], from: Date, to: Date): Promise<Trend> {
  const metrics = ids.map((id) => METRICS.find((metric) => metric.id === id)!);
  const rows = await readMetricRows(pool, metrics, from, to, TREND_BUCKET_SECONDS);
  const points: ({ at: string } & Record<string, number | string>)[] = [];
  for (let at = from.getTime(); at < to.getTime(); at += TREND_BUCKET_SECONDS * 1000) {
    points.push({ at: new Date(at).toISOString(), ...Object.fromEntries(ids.map((id) => [id, 0])) });
  }
  const byStart = new Map(points.map((point) => [point.at, point]));
  const lines = metrics.map((metric) => {
    let total = 0;
    for (const row of rows.get(metric.id)!) {
      const value = row.value ?? 0;
      // A count metric's keys (reasons, triggers) add up to its line.
      if (row.bucket === null) total += value;
      else {
        const point = byStart.get(row.bucket.toISOString());
        if (point) point[metric.id] = (point[metric.id] as number) + value;
      }
    }
    return { id: metric.id, title: metric.title, total, href: metric.list?.({ from: from.toISOString(), to: to.toISOString() }) ?? null };
  });
  return { lines, points };
}

export async function readOverview(pool: StaffReadable): Promise<Overview> {
  const [figures] = await run<FiguresRow>(pool, sql.readOverviewFigures, []);
  const row = figures!;
  const to = row.db_now;
  const from = new Date(to.getTime() - OVERVIEW_WINDOW_MS);
  const [churn, uncertainty] = await Promise.all([readTrend(pool, TREND_METRICS.churn, from, to), readTrend(pool, TREND_METRICS.uncertainty, from, to)]);
  const inFlight = IN_FLIGHT_HEADLINES.map((headline) => ({
    headline,
    label: HEADLINES[headline].label,
    count: row.in_flight[headline] ?? 0,
    href: list("/requests", { status: "active", progress: headline }),
  }));
  return {
    at: to.toISOString(),
    inFlight,
    inFlightTotal: { count: inFlight.reduce((sum, figure) => sum + figure.count, 0), href: list("/requests", { status: "active" }) },
    openReviews: { count: row.open_reviews, href: "/review" },
    overdueReviews: { count: row.overdue_reviews, href: list("/review", { overdue: "true" }) },
    receiptsLastHour: { count: row.receipts_last_hour, href: list("/steps", { receipt: "true", from: from.toISOString(), to: to.toISOString() }) },
    workersAlive: { count: row.workers_alive, href: "/workers" },
    blockedDestinations: row.blocked_destinations.map((block) => ({ ...block, since: new Date(block.since).toISOString(), href: list("/steps", { adapter: block.adapter }) })),
    failingEndpoints: row.failing_endpoints.map((endpoint) => ({ ...endpoint, since: new Date(endpoint.since).toISOString(), href: `/webhooks/${endpoint.id}` })),
    churn,
    uncertainty,
    metricsHref: list("/metrics", { range: "1h" }),
  };
}
