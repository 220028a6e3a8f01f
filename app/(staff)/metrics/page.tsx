import type { Metadata } from "next";
import { metricsQuery } from "@/lib/api/contract/engineer/metrics";
import { readPool } from "@/lib/db/read-pool";
import { InvalidMetricsRangeError } from "@/lib/metrics/errors";
import { readMetrics, resolveRange } from "@/lib/metrics/series";
import { flatParams, type SearchParams } from "@/components/engineer/search-params";
import { MetricsView } from "@/components/metrics/metrics-view";
import { rangeQuery, selectionFrom } from "@/components/metrics/range";
import { authorizePage } from "@/lib/auth/page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Metrics", robots: { index: false, follow: false } };

export default async function MetricsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await authorizePage("technical:read", "/metrics");
  const selection = selectionFrom(flatParams(await searchParams));
  const parsed = metricsQuery.safeParse(Object.fromEntries(new URLSearchParams(rangeQuery(selection))));
  let initial = null;
  let initialError: string | null = null;
  if (!parsed.success) initialError = `the range in the address is not valid (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")})`;
  else {
    try {
      initial = await readMetrics(readPool(), resolveRange(parsed.data));
    } catch (error) {
      if (error instanceof InvalidMetricsRangeError) initialError = error.message;
      else throw error;
    }
  }
  return (
    <div className="stack">
      <h1>Metrics</h1>
      <p className="muted">
        Two families, never one &ldquo;failures&rdquo; graph. Also for scraping: <a href="/api/metrics/prometheus">/api/metrics/prometheus</a>.
      </p>
      <MetricsView selection={selection} initial={initial} initialError={initialError} />
    </div>
  );
}
