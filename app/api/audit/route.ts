/** GET /api/audit — the audit log, newest first (engineers and admins). */
import { auditPageSchema, auditQuery } from "@/lib/api/contract/staff";
import { handle, json, readQuery } from "@/lib/api/http";
import { readAuditPage } from "@/lib/audit/log";
import { authorize } from "@/lib/auth/authorize";
import { prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";

export const GET = handle(async (request) => {
  await authorize(request, "audit:read");
  const { before, limit } = readQuery(request, auditQuery);
  return json(auditPageSchema, await readAuditPage(prisma(), before ?? null, limit));
});
