/** GET/POST /api/admin/epoch-transitions — the epoch in force, and moving to a new one (admins). */
import { epochStatusSchema, startTransitionBody, transitionResultSchema } from "@/lib/api/contract/staff";
import { handle, json, readJson } from "@/lib/api/http";
import { auditEpochTransition } from "@/lib/audit/log";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { epochStatus, runEpochTransition } from "@/lib/engine/epoch";
import { registeredEpochDestinations } from "@/lib/engine/epoch-admin";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "epoch:transition");
  const status = await epochStatus(pool());
  return json(epochStatusSchema, { ...status, blocked: [...status.blocked] });
});

export const POST = handle(async (request) => {
  const admin = await authorize(request, "epoch:transition");
  const { reason } = await readJson(request, startTransitionBody);
  const result = await runEpochTransition(pool(), {
    reason,
    requestedBy: actorName(admin),
    destinations: await registeredEpochDestinations(pool()),
    recordOutcome: auditEpochTransition,
  });
  return json(transitionResultSchema, {
    ...result,
    fromEpoch: result.fromEpoch.toString(),
    toEpoch: result.toEpoch.toString(),
    destinations: { ...result.destinations },
  });
});
