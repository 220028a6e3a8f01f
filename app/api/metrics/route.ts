/** GET /api/metrics?from&to&bucket — lease churn and outcome uncertainty as time series. */
import { metricsQuery, metricsSchema } from "@/lib/api/contract/engineer/metrics";
import { handle, json, readQuery } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { readMetrics, resolveRange } from "@/lib/metrics/series";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return json(metricsSchema, await readMetrics(readPool(), resolveRange(readQuery(request, metricsQuery))));
});
