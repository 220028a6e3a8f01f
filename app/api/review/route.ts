/** GET /api/review — the review queue, overdue first, filtered, with keyset pagination. */
import { reviewPageSchema, reviewQueueQuery } from "@/lib/api/contract/support";
import { handle, json, readQuery } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { readPool } from "@/lib/db/read-pool";
import { listReviewCases } from "@/lib/review/queue";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  const staff = await authorize(request, "review:read");
  return json(reviewPageSchema, await listReviewCases(readPool(), readQuery(request, reviewQueueQuery), actorName(staff)));
});
