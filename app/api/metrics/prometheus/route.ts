/** GET /api/metrics/prometheus — both families in the Prometheus text exposition format 0.0.4, for a scrape token or an engineer. */
import { handle } from "@/lib/api/http";
import { authorizeScrape } from "@/lib/auth/scraper";
import { readPool } from "@/lib/db/read-pool";
import { PROMETHEUS_CONTENT_TYPE, prometheusExposition } from "@/lib/metrics/prometheus";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorizeScrape(request);
  return new Response(await prometheusExposition(readPool()), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } });
});
