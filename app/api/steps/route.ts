/** GET /api/steps — steps, most recently changed first, filtered, keyset-paginated (engineers). */
import { listStepsQuery, stepPageSchema } from "@/lib/api/contract/engineer/steps";
import { handle, json, readQuery } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { listSteps } from "@/lib/steps/list";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "technical:read");
  return json(stepPageSchema, await listSteps(readPool(), readQuery(request, listStepsQuery)));
});
