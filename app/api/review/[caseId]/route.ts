/** GET /api/review/{caseId} — one case with its evidence and what the customer sees. */
import { reviewCaseDetailSchema, reviewCaseParams } from "@/lib/api/contract/support";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { pool, prisma } from "@/lib/db/pool";
import { reviewCaseDetail } from "@/lib/review/case";

export const dynamic = "force-dynamic";

export const GET = handle<{ caseId: string }>(async (request, { params }) => {
  await authorize(request, "review:read");
  const { caseId } = await readParams(params, reviewCaseParams);
  return json(reviewCaseDetailSchema, await reviewCaseDetail({ pool: pool(), prisma: prisma() }, caseId));
});
