/**
 * The audit log: every resolution, account change, credential change and epoch transition,
 * with who, what, when (database clock) and the state before and after. Each entry is written
 * with the change it records, on the same client inside its transaction, so neither exists
 * without the other. The table refuses UPDATE, DELETE and TRUNCATE (migration `*_audit`). The
 * append is named SQL on the change's own client; reading the log is a Prisma read (decision 011).
 */
import type { PrismaClient } from "@/lib/generated/prisma/client";

export { appendAudit, auditEpochTransition } from "./append";
export type { AuditAction, AuditEntry } from "./append";

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
