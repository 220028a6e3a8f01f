/**
 * The audit log: every resolution, account change, credential change and epoch transition,
 * with who, what, when (database clock) and the state before and after. Each entry is written
 * with the change it records, on the same client inside its transaction, so neither exists
 * without the other. The table refuses UPDATE, DELETE and TRUNCATE (migration `*_audit`). The
 * append is named SQL on the change's own client; reading the log is a Prisma read (decision 011).
 */
import type { Queryable } from "@/lib/engine/db";
import { run } from "@/lib/engine/db";
import type { TransitionOutcome } from "@/lib/engine/epoch";
import type { PrismaClient } from "@/lib/generated/prisma/client";

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
  | "webhook.redelivered";

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

export type AuditPage = {
  items: { id: string; at: string; actor: string; action: string; subjectType: string; subjectId: string; before: unknown; after: unknown }[];
  nextCursor: string | null;
};

/** Newest first, keyset on id (ids only grow): the entries older than `before`, one page of `limit`. */
export async function readAuditPage(db: PrismaClient, before: string | null, limit: number): Promise<AuditPage> {
  const rows = await db.auditLog.findMany({
    where: before === null ? {} : { id: { lt: BigInt(before) } },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    items: page.map((row) => ({ ...row, id: row.id.toString(), at: row.at.toISOString() })),
    nextCursor: rows.length > limit ? page.at(-1)!.id.toString() : null,
  };
}
