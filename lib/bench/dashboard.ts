/**
 * Dashboard reads against the seeded history (lib/bench/seed.ts), through the same functions the
 * pages and routes call: the end-user projection by tracking token, an engineer's step detail, a
 * page of the review queue (first page and pages further on, by keyset cursor), an open review
 * case's page, and the metrics
 * series (the page's default range, the last hour in 1-minute buckets; also a day in 15-minute
 * buckets, reported beside it). Each read runs sequentially on a warm pool; p50 and p95 in ms.
 */
import { reviewQueueQuery } from "@/lib/api/contract/support";
import { createPool, createPrisma } from "@/lib/db/pool";
import { METRICS } from "@/lib/metrics/definitions";
import { readMetric, readMetrics, resolveRange } from "@/lib/metrics/series";
import { trackingViewByToken } from "@/lib/projection/read";
import { reviewCaseDetail } from "@/lib/review/case";
import { listReviewCases } from "@/lib/review/queue";
import { readStepDetail } from "@/lib/steps/detail";
import { measureBulkCancel, measureRequestPage, type BulkFigures, type RequestPageFigures } from "./request-page";
import { ensureSeeded } from "./seed";
import { percentile, round } from "./stats";

export type ReadFigures = { readonly p50: number; readonly p95: number; readonly samples: number };

export type DashboardResult = {
  readonly steps: number;
  readonly leaseEvents: number;
  readonly generated: boolean;
  readonly generationMs: number;
  readonly projection: ReadFigures;
  readonly stepDetail: ReadFigures;
  readonly reviewQueue: ReadFigures;
  readonly reviewCase: ReadFigures;
  readonly metrics: ReadFigures;
  readonly metricsDay: ReadFigures;
  /** Each distinct metric statement alone over the default range, by statement name, median of 3, ms: what the series read waits on. */
  readonly metricStatementsMs: Record<string, number>;
  /** The request page of one request with 200 steps and 2,000 attempts: read, and read + API answer (lib/bench/request-page.ts). */
  readonly requestPage: RequestPageFigures;
  /** A bulk cancel of 500 requests from the requests list's filter: preview, start, run. */
  readonly bulkCancel: BulkFigures;
};

const WARM_UP = 2;

async function timeEach<T>(inputs: readonly T[], read: (input: T) => Promise<unknown>): Promise<ReadFigures> {
  for (const input of inputs.slice(0, WARM_UP)) await read(input);
  const samples: number[] = [];
  for (const input of inputs) {
    const startedAt = performance.now();
    const result = await read(input);
    samples.push(performance.now() - startedAt);
    if (result === null || result === undefined) throw new Error("a dashboard read found nothing: the seed and the read disagree");
  }
  return { p50: round(percentile(samples, 50), 2), p95: round(percentile(samples, 95), 2), samples: samples.length };
}

export async function measureDashboard(scale: number, samples: number, log: (line: string) => void): Promise<DashboardResult> {
  const seed = await ensureSeeded(scale, log);
  const pool = createPool(seed.url, { applicationName: "bench-dashboard", max: 10 });
  const prisma = createPrisma(seed.url, { applicationName: "bench-dashboard:prisma", max: 10 });
  try {
    // Random rows, all over the history (old and new alike).
    const { rows: workflows } = await pool.query<{ tracking_token: string }>(
      "SELECT tracking_token FROM workflow ORDER BY md5(id::text || $1) LIMIT $2",
      [String(Math.random()), samples],
    );
    const { rows: steps } = await pool.query<{ id: string }>("SELECT id FROM step ORDER BY md5(id::text || $1) LIMIT $2", [String(Math.random()), samples]);

    const projection = await timeEach(workflows.map((w) => w.tracking_token), (token) => trackingViewByToken(pool, token));
    const stepDetail = await timeEach(steps.map((s) => s.id), (stepId) => readStepDetail(pool, stepId));

    // Walk the open queue page by page (keyset), starting again at the top when it ends.
    let cursor: string | null = null;
    const reviewQueue = await timeEach(Array.from({ length: samples }, (_, i) => i), async () => {
      const page = await listReviewCases(pool, reviewQueueQuery.parse({ status: "open", cursor: cursor ?? undefined }), "bench");
      cursor = page.nextCursor;
      return page;
    });
    const { rows: cases } = await pool.query<{ id: string }>(
      "SELECT id FROM review_case WHERE status = 'open' ORDER BY md5(id::text || $1) LIMIT $2",
      [String(Math.random()), samples],
    );
    // The seed holds fewer open cases than samples at small scales: each is read several times.
    const reviewCase = await timeEach(Array.from({ length: samples }, (_, i) => cases[i % cases.length]!.id), (caseId) => reviewCaseDetail({ pool, prisma }, caseId));
    // The series read runs every metric's statement at once; fewer samples, as each can take seconds.
    // Ranges end where the seed's history ends, so a seed kept for days reads as full an hour as a
    // fresh one.
    const range = resolveRange({ bucket: "1m" }, seed.generatedAt);
    const day = resolveRange({ from: new Date(seed.generatedAt.getTime() - 86_400_000).toISOString(), bucket: "15m" }, seed.generatedAt);
    const metrics = await timeEach(Array.from({ length: Math.min(samples, 20) }, (_, i) => i), () => readMetrics(pool, range));
    const metricsDay = await timeEach(Array.from({ length: Math.min(samples, 5) }, (_, i) => i), () => readMetrics(pool, day));
    const metricStatementsMs: Record<string, number> = {};
    for (const metric of METRICS.filter((m, i) => METRICS.findIndex((other) => other.statement === m.statement) === i)) {
      const times: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const startedAt = performance.now();
        await readMetric(pool, metric, range.from, range.to, 60);
        times.push(performance.now() - startedAt);
      }
      metricStatementsMs[metric.statement.name] = round(percentile(times, 50), 1);
    }
    const requestPage = await measureRequestPage(pool, Math.min(samples, 50));
    const bulkCancel = await measureBulkCancel(pool, 500);
    return {
      requestPage,
      bulkCancel,
      steps: seed.steps,
      leaseEvents: seed.leaseEvents,
      generated: seed.generated,
      generationMs: round(seed.generationMs, 0),
      projection,
      stepDetail,
      reviewQueue,
      reviewCase,
      metrics,
      metricsDay,
      metricStatementsMs,
    };
  } finally {
    await Promise.all([pool.end(), prisma.$disconnect()]);
  }
}
