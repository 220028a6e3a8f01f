/**
 * POST /api/review/{caseId}/resolution — confirm delivered, confirm not delivered, or abandon.
 * The actor is the x-fenceline-actor header until real authentication lands.
 */
import { actorHeader, resolutionBody, resolutionResultSchema, reviewCaseParams } from "@/lib/api/contract/support";
import { handle, HttpProblem, json, readJson, readParams } from "@/lib/api/http";
import { pool } from "@/lib/db/pool";
import { resolveReviewCase, ReviewConflictError } from "@/lib/review/resolve";

export const dynamic = "force-dynamic";

export const POST = handle<{ caseId: string }>(async (request, { params }) => {
  const { caseId } = await readParams(params, reviewCaseParams);
  const actor = actorHeader(request.headers.get("x-fenceline-actor"));
  const body = await readJson(request, resolutionBody);
  try {
    return json(resolutionResultSchema, await resolveReviewCase(pool(), caseId, body, actor));
  } catch (error) {
    // The conflict's details (who resolved it, when) go into the problem so the page can say so inline.
    if (error instanceof ReviewConflictError) throw new HttpProblem(409, error.title, error.message, { code: error.code, ...error.details });
    throw error;
  }
});
