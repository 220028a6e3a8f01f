/** Who is signed in: the better-auth session named by the request's cookie, with its roles. */
import type { Pool } from "pg";
import { run } from "@/lib/engine/db";
import { auth } from "./auth";
import type { StaffRole } from "./roles";

export type Staff = { readonly id: string; readonly email: string; readonly name: string; readonly roles: StaffRole[] };

const rolesOfUser = {
  name: "auth_roles_of_user",
  text: `SELECT role FROM staff_role WHERE user_id = $1 ORDER BY role`,
} as const;

/** The signed-in staff member, or null for no, a forged or an expired session. */
export async function staffFromHeaders(db: Pool, headers: Headers): Promise<Staff | null> {
  // A request without the cookie never reaches the database.
  if (!/(^|;\s*)(__Secure-)?fenceline\.session_token=/.test(headers.get("cookie") ?? "")) return null;
  const session = await auth().api.getSession({ headers, query: { disableRefresh: true } });
  if (!session) return null;
  const roles = await run<{ role: StaffRole }>(db, rolesOfUser, [session.user.id]);
  return { id: session.user.id, email: session.user.email, name: session.user.name, roles: roles.map((row) => row.role) };
}

/** How a staff member appears in records (resolutions, revocations, the audit log). */
export const actorName = (staff: Staff): string => staff.email;
