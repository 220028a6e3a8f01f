/** POST /api/review/{caseId}/ownership — take a case, hand it to a support colleague, or give it back, as the signed-in support person. */
import { ownershipBody, ownershipResultSchema, reviewCaseParams } from "@/lib/api/contract/support";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { changeReviewCaseOwnership } from "@/lib/review/ownership";

export const dynamic = "force-dynamic";

export const POST = handle<{ caseId: string }>(async (request, { params }) => {
  const staff = await authorize(request, "review:resolve");
  const { caseId } = await readParams(params, reviewCaseParams);
  const body = await readJson(request, ownershipBody);
  return json(ownershipResultSchema, await changeReviewCaseOwnership(pool(), caseId, body, actorName(staff)));
});
