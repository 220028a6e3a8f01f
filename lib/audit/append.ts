/**
 * Appending to the audit log: named SQL on the change's own client, inside its transaction
 * (lib/audit/log.ts says why). Apart from the log's Prisma read, so the engine code that audits
 * (a review resolution) does not bring Prisma into the package's testing door.
 */
import type { Queryable } from "@/lib/engine/db";
import { run } from "@/lib/engine/db";
import type { TransitionOutcome } from "@/lib/engine/epoch";

export type AuditAction =
  | "review.resolved"
  | "review.taken"
  | "review.handed_over"
  | "review.given_back"
  | "account.created"
  | "account.password_reset"
  | "account.roles_changed"
  | "worker_token.created"
  | "worker_token.revoked"
  | "app_key.created"
  | "app_key.revoked"
  | "scrape_token.created"
  | "scrape_token.revoked"
  | "epoch.transition"
  | "webhook_endpoint.registered"
  | "webhook_endpoint.disabled"
  | "webhook_endpoint.deleted"
  | "webhook.redelivered"
  | "fair_share.overridden"
  | "fair_share.override_cleared"
  | "schedule.created"
  | "schedule.paused"
  | "schedule.resumed"
  | "schedule.deleted"
  | "request.cancelled"
  | "request.rerun";

export type AuditEntry = {
  readonly actor: string;
  readonly action: AuditAction;
  readonly subjectType: string;
  readonly subjectId: string;
  readonly before: unknown;
  readonly after: unknown;
};

const appendEntry = {
  name: "audit_append",
  text: `INSERT INTO audit_log (actor, action, subject_type, subject_id, before, after)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
         RETURNING id`,
} as const;

export async function appendAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  await run(db, appendEntry, [entry.actor, entry.action, entry.subjectType, entry.subjectId, JSON.stringify(entry.before ?? null), JSON.stringify(entry.after ?? null)]);
}

/** runEpochTransition's recordOutcome: the transition's audit entry, in the transaction of its outcome. */
export async function auditEpochTransition(db: Queryable, outcome: TransitionOutcome): Promise<void> {
  await appendAudit(db, {
    actor: outcome.requestedBy,
    action: "epoch.transition",
    subjectType: "epoch_transition",
    subjectId: outcome.transitionId,
    before: { epoch: outcome.fromEpoch.toString() },
    after: { epoch: outcome.toEpoch.toString(), state: outcome.state, reason: outcome.reason, revokedLeases: outcome.revokedLeases, destinations: outcome.destinations },
  });
}
