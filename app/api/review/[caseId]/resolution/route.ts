/** POST /api/review/{caseId}/resolution — confirm delivered, confirm not delivered, or abandon, as the signed-in support person. */
import { resolutionBody, resolutionResultSchema, reviewCaseParams } from "@/lib/api/contract/support";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { resolveReviewCase } from "@/lib/review/resolve";

export const dynamic = "force-dynamic";

export const POST = handle<{ caseId: string }>(async (request, { params }) => {
  const staff = await authorize(request, "review:resolve");
  const { caseId } = await readParams(params, reviewCaseParams);
  const body = await readJson(request, resolutionBody);
  return json(resolutionResultSchema, await resolveReviewCase(pool(), caseId, body, actorName(staff)));
});
