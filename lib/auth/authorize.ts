/**
 * Authorisation, called by every staff route handler and page (not by a proxy): who is asking,
 * and may they. An API caller without a session gets 401, one without the permission 403, both
 * problem+json; a mutating call from another site is refused first (CSRF).
 */
import { prisma } from "@/lib/db/pool";
import { NotSignedInError, PermissionDeniedError } from "./errors";
import { refuseCrossSite } from "./origin";
import { may, rolesGranting, type Permission } from "./roles";
import { staffFromHeaders, type Staff } from "./staff";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export async function authorize(request: Request, permission: Permission): Promise<Staff> {
  if (!SAFE_METHODS.has(request.method)) refuseCrossSite(request);
  const staff = await staffFromHeaders(prisma(), request.headers);
  if (!staff) throw new NotSignedInError();
  refuseUnless(staff, permission);
  return staff;
}

export function refuseUnless(staff: Staff, permission: Permission): void {
  if (!may(staff.roles, permission)) {
    throw new PermissionDeniedError(`${permission} needs the ${rolesGranting(permission).join(" or ")} role; you hold ${staff.roles.join(", ") || "none"}`);
  }
}
