/** GET /api/requests/{id}/timeline — a request's whole story for engineers, with an ETag (304 while unchanged). */
import { requestPageParams, requestPageQuery, requestTimelineSchema } from "@/lib/api/contract/engineer/request-page";
import { weakConditionalJson } from "@/lib/api/conditional";
import { handle, readParams, readQuery } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { readRequestPage } from "@/lib/requests/page/read";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  await authorize(request, "technical:read");
  const { id } = await readParams(params, requestPageParams);
  const { full } = readQuery(request, requestPageQuery);
  const page = await readRequestPage(readPool(), id, { full: full ?? false });
  // The read's clock changes on every read; the ETag leaves it out, so an unchanged request is a 304.
  return weakConditionalJson(request, requestTimelineSchema, page, { ...page, dbNow: null }, { cacheControl: "private, no-cache" });
});
