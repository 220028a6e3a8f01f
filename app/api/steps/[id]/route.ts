/** GET /api/steps/{id} — a step's technical record: lease terms and events, attempts, receipts, evidence. */
import { stepDetailSchema, stepIdParams } from "@/lib/api/contract/engineer/steps";
import { handle, json, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { readPool } from "@/lib/db/read-pool";
import { readStepDetail } from "@/lib/steps/detail";

export const dynamic = "force-dynamic";

export const GET = handle<{ id: string }>(async (request, { params }) => {
  await authorize(request, "technical:read");
  const { id } = await readParams(params, stepIdParams);
  return json(stepDetailSchema, await readStepDetail(readPool(), id));
});
