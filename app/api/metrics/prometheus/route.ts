/** GET /api/metrics/prometheus — both families in the Prometheus text exposition format 0.0.4. */
import { handle } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { pool } from "@/lib/db/pool";
import { PROMETHEUS_CONTENT_TYPE, prometheusExposition } from "@/lib/metrics/prometheus";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return new Response(await prometheusExposition(pool()), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } });
});
