/**
 * An engineer revokes a step's current lease. The revocation is recorded (lease event, who and
 * why); what happens next is recovery's decision from the evidence, exactly as after an expiry.
 * A revoke cancels nothing at the destination.
 */
import type { Pool } from "pg";
import type { RevokeResult } from "@/lib/api/contract/engineer/steps";
import { run } from "@/lib/engine/db";
import { NoOpenLeaseError, NotFoundError } from "@/lib/engine/errors";
import { revokeLease } from "@/lib/engine/recovery";
import * as sql from "./sql";

export async function revokeStepLease(pool: Pool, stepId: string, reason: string, actor: string): Promise<RevokeResult> {
  const applied = await revokeLease(pool, stepId, reason, actor);
  if (!applied) {
    const [step] = await run(pool, sql.readStep, [stepId]);
    if (!step) throw new NotFoundError("step", stepId);
    throw new NoOpenLeaseError(stepId);
  }
  const { decision } = applied;
  const detail =
    decision.category === "review" || decision.category === "give_up"
      ? decision.reason
      : decision.category === "reconcile"
        ? `external reference ${decision.externalReference ?? "none"} from the ${decision.source.replace("_", " ")}`
        : "nextMode" in decision
          ? `next attempt: ${decision.nextMode.replaceAll("_", " ")}`
          : null;
  return { stepId, revokedTerm: Number(applied.fencingTerm), decision: { category: decision.category, detail } };
}
