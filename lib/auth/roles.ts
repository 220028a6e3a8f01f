/**
 * What each staff role may do. Roles add up: a user holding engineer and support may both read
 * technical detail and resolve cases. Every route handler and staff page names the permission it
 * needs (lib/auth/authorize.ts); nothing is granted by reaching a URL.
 */
export const STAFF_ROLES = ["support", "engineer", "admin"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export type Permission =
  | "review:read"
  | "review:resolve"
  | "technical:read"
  | "lease:revoke"
  | "lab:operate"
  | "audit:read"
  | "accounts:manage"
  | "worker-tokens:manage"
  | "app-keys:manage"
  | "scrape-tokens:manage"
  | "epoch:transition"
  | "webhooks:manage"
  | "webhooks:redeliver"
  | "fair-share:manage"
  | "schedules:read"
  | "schedules:manage"
  | "requests:operate";

const GRANTS: Record<StaffRole, readonly Permission[]> = {
  support: ["review:read", "review:resolve"],
  // Engineers see cases as evidence but settle none unless they also hold support.
  engineer: ["review:read", "technical:read", "lease:revoke", "lab:operate", "audit:read", "webhooks:redeliver", "schedules:read", "requests:operate"],
  admin: ["accounts:manage", "worker-tokens:manage", "app-keys:manage", "scrape-tokens:manage", "audit:read", "epoch:transition", "webhooks:manage", "fair-share:manage", "schedules:read", "schedules:manage"],
};

export function may(roles: readonly StaffRole[], permission: Permission): boolean {
  return roles.some((role) => GRANTS[role].includes(permission));
}

/** The roles any of which grants `permission`, for a refusal that says what was missing. */
export function rolesGranting(permission: Permission): StaffRole[] {
  return STAFF_ROLES.filter((role) => GRANTS[role].includes(permission));
}
