/**
 * PUT    /api/admin/fair-share/{kind} — override a kind's limit per key and fairness rule (admins; audited).
 * DELETE /api/admin/fair-share/{kind} — remove the override (admins; audited).
 */
import { clearFairShareBody, fairShareKindParams, kindFairShareSchema, overrideFairShareBody } from "@/lib/api/contract/engineer/fair-share";
import { handle, json, readJson, readParams } from "@/lib/api/http";
import { authorize } from "@/lib/auth/authorize";
import { actorName } from "@/lib/auth/staff";
import { pool } from "@/lib/db/pool";
import { clearFairShareOverride, overrideFairShare } from "@/lib/fair-share/settings";

export const dynamic = "force-dynamic";

export const PUT = handle<{ kind: string }>(async (request, { params }) => {
  const admin = await authorize(request, "fair-share:manage");
  const { kind } = await readParams(params, fairShareKindParams);
  const { limitPerKey, fairness, reason } = await readJson(request, overrideFairShareBody);
  return json(kindFairShareSchema, await overrideFairShare(pool(), kind, { limitPerKey, fairness }, reason, actorName(admin)));
});

export const DELETE = handle<{ kind: string }>(async (request, { params }) => {
  const admin = await authorize(request, "fair-share:manage");
  const { kind } = await readParams(params, fairShareKindParams);
  const { reason } = await readJson(request, clearFairShareBody);
  return json(kindFairShareSchema, await clearFairShareOverride(pool(), kind, reason, actorName(admin)));
});
