/** Who is signed in: the better-auth session named by the request's cookie, with its roles (a Prisma read). */
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { auth } from "./auth";
import type { StaffRole } from "./roles";

export type Staff = { readonly id: string; readonly email: string; readonly name: string; readonly roles: StaffRole[] };

/** The signed-in staff member, or null for no, a forged or an expired session. */
export async function staffFromHeaders(db: PrismaClient, headers: Headers): Promise<Staff | null> {
  // A request without the cookie never reaches the database.
  if (!/(^|;\s*)(__Secure-)?fenceline\.session_token=/.test(headers.get("cookie") ?? "")) return null;
  const session = await auth().api.getSession({ headers, query: { disableRefresh: true } });
  if (!session) return null;
  const roles = await db.staffRole.findMany({ where: { userId: session.user.id }, select: { role: true }, orderBy: { role: "asc" } });
  return { id: session.user.id, email: session.user.email, name: session.user.name, roles: roles.map((row): StaffRole => row.role) };
}

/** How a staff member appears in records (resolutions, revocations, the audit log). */
export const actorName = (staff: Staff): string => staff.email;
