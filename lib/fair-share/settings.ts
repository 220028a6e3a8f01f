/**
 * Fair share per workflow kind: what the kind declares (its highest registered version's
 * `fairShare`), an admin's override of the limit per key and the fairness rule, and what is in
 * force. Setting and clearing an override are audited in the transaction of the change; the
 * engine reads what is in force (fl_fair_share) at every admission and request creation, so a
 * raised limit admits waiting steps at the next admission pass and a lowered one takes effect
 * as steps end (nothing running is stopped).
 */
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/log";
import type { Fairness } from "@/lib/definitions/workflow";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { inTransaction, run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import * as sql from "./sql";

/** A limit per key (null: none) and the rule between keys. */
export type FairShareRule = { readonly limitPerKey: number | null; readonly fairness: Fairness };

export type KindFairShare = {
  readonly kind: string;
  /** What the kind's highest registered version declares, with its default priority. */
  readonly declared: FairShareRule & { readonly version: number; readonly priority: number };
  /** An admin's override, when there is one. */
  readonly override: (FairShareRule & { readonly reason: string; readonly setBy: string; readonly setAt: string }) | null;
  /** What claims follow now. */
  readonly effective: FairShareRule;
};

type SettingsRow = {
  kind: string;
  version: number;
  declared_limit: number | null;
  declared_fairness: Fairness;
  default_priority: number;
  overridden: boolean;
  override_limit: number | null;
  override_fairness: Fairness | null;
  override_reason: string | null;
  override_by: string | null;
  override_at: Date | null;
};

const settingsOf = (row: SettingsRow): KindFairShare => {
  const declared = { version: row.version, limitPerKey: row.declared_limit, fairness: row.declared_fairness, priority: row.default_priority };
  const override = row.overridden
    ? { limitPerKey: row.override_limit, fairness: row.override_fairness!, reason: row.override_reason!, setBy: row.override_by!, setAt: row.override_at!.toISOString() }
    : null;
  return {
    kind: row.kind,
    declared,
    override,
    effective: override ? { limitPerKey: override.limitPerKey, fairness: override.fairness } : { limitPerKey: declared.limitPerKey, fairness: declared.fairness },
  };
};

/** Every registered kind's fair share, by kind. */
export async function listFairShare(db: StaffReadable): Promise<KindFairShare[]> {
  return (await run<SettingsRow>(db, sql.kindSettings, [null])).map(settingsOf);
}

async function kindFairShare(db: StaffReadable, kind: string): Promise<KindFairShare> {
  const [row] = await run<SettingsRow>(db, sql.kindSettings, [kind]);
  if (!row) throw new NotFoundError("workflow kind", kind);
  return settingsOf(row);
}

/** Overrides a registered kind's limit per key and fairness rule; audited. NotFoundError for an unknown kind. */
export async function overrideFairShare(pool: Pool, kind: string, rule: FairShareRule, reason: string, actor: string): Promise<KindFairShare> {
  return inTransaction(pool, async (client) => {
    await kindFairShare(client, kind);
    const [{ previous }] = (await run<{ previous: unknown }>(client, sql.setOverride, [kind, rule.limitPerKey, rule.fairness, reason, actor])) as [{ previous: unknown }];
    await appendAudit(client, {
      actor,
      action: "fair_share.overridden",
      subjectType: "workflow_kind",
      subjectId: kind,
      before: previous,
      after: { limit_per_key: rule.limitPerKey, fairness: rule.fairness, reason },
    });
    return kindFairShare(client, kind);
  });
}

/** Removes an override, so the kind's declaration applies again; audited. NotFoundError for an unknown kind. */
export async function clearFairShareOverride(pool: Pool, kind: string, reason: string, actor: string): Promise<KindFairShare> {
  return inTransaction(pool, async (client) => {
    await kindFairShare(client, kind);
    const [cleared] = await run<Record<string, unknown>>(client, sql.clearOverride, [kind]);
    if (cleared) {
      await appendAudit(client, { actor, action: "fair_share.override_cleared", subjectType: "workflow_kind", subjectId: kind, before: cleared, after: { reason } });
    }
    return kindFairShare(client, kind);
  });
}
