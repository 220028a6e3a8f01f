/** POST /api/requests/{id}/actions/rerun — rerun a request that could not be completed, from one of its steps (audited). */
import { requestPageParams, rerunBody, rerunResultSchema } from "@/lib/api/contract/engineer/request-page";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { DEFAULT_RERUN_BUDGET, rerunFromStep } from "@/lib/requests/page/actions";

export const dynamic = "force-dynamic";

export const POST = handle<{ id: string }>(async (request, { params }) => {
  const staff = await authorize(request, "requests:operate");
  const { id } = await readParams(params, requestPageParams);
  const body = await readJson(request, rerunBody);
  const outcome = await rerunFromStep(pool(), {
    id,
    fromStepId: body.fromStepId,
    seenVersion: body.seenVersion,
    budget: body.budget ?? DEFAULT_RERUN_BUDGET,
    reason: body.reason,
    actor: actorName(staff),
  });
  return json(rerunResultSchema, outcome);
});
