/**
 * Staff accounts, managed by admins (and seeded in demo mode). A user, its password credential
 * (hashed with better-auth's scrypt) and its roles are written in one transaction with the audit
 * entry that records the change. Passwords never appear in the audit log. An account with no
 * role left can sign in but open nothing; roles are read on every request, so a change applies at once.
 */
import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { hashPassword } from "better-auth/crypto";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import { AccountExistsError } from "./errors";
import type { StaffRole } from "./roles";

export type AccountInput = { email: string; name: string; password: string; roles: readonly StaffRole[] };
export type Account = { id: string; email: string; name: string; roles: StaffRole[]; createdAt: string };

const sql = {
  insertUser: {
    name: "accounts_insert_user",
    text: `INSERT INTO auth_user (id, name, email, email_verified, created_at, updated_at)
           VALUES ($1, $2, lower($3), true, now(), now())
           ON CONFLICT (email) DO NOTHING
           RETURNING id, created_at`,
  },
  insertCredential: {
    name: "accounts_insert_credential",
    text: `INSERT INTO auth_account (id, account_id, provider_id, user_id, password, created_at, updated_at)
           VALUES ($1, $2, 'credential', $2, $3, now(), now())`,
  },
  // Locks the user so concurrent role changes apply one after the other, and reads the roles before.
  lockUser: {
    name: "accounts_lock_user",
    text: `SELECT coalesce((SELECT array_agg(role::text ORDER BY role) FROM staff_role WHERE user_id = u.id), '{}') AS roles
           FROM auth_user u WHERE u.id = $1 FOR UPDATE`,
  },
  // Two statements: a data-modifying CTE's DELETE is invisible to an INSERT in the same statement.
  clearRoles: { name: "accounts_clear_roles", text: `DELETE FROM staff_role WHERE user_id = $1` },
  grantRoles: {
    name: "accounts_grant_roles",
    text: `INSERT INTO staff_role (user_id, role) SELECT $1, unnest($2::staff_role_name[])`,
  },
  list: {
    name: "accounts_list",
    text: `SELECT u.id, u.email, u.name, u.created_at,
                  coalesce(array_agg(r.role::text ORDER BY r.role) FILTER (WHERE r.role IS NOT NULL), '{}') AS roles
           FROM auth_user u LEFT JOIN staff_role r ON r.user_id = u.id
           GROUP BY u.id ORDER BY u.email LIMIT 500`,
  },
} as const;

export async function createAccount(db: Pool, input: AccountInput, actor: string): Promise<Account> {
  const passwordHash = await hashPassword(input.password);
  const id = randomUUID();
  return inTransaction(db, async (client) => {
    const [user] = await run<{ id: string; created_at: Date }>(client, sql.insertUser, [id, input.name, input.email]);
    if (!user) throw new AccountExistsError(input.email);
    await run(client, sql.insertCredential, [randomUUID(), id, passwordHash]);
    const roles = [...new Set(input.roles)].sort();
    await run(client, sql.grantRoles, [id, roles]);
    const account = { id, email: input.email.toLowerCase(), name: input.name, roles, createdAt: user.created_at.toISOString() };
    await appendAudit(client, { actor, action: "account.created", subjectType: "account", subjectId: id, before: null, after: { email: account.email, name: account.name, roles } });
    return account;
  });
}

export async function setRoles(db: Pool, userId: string, roles: readonly StaffRole[], actor: string): Promise<void> {
  const wanted = [...new Set(roles)].sort();
  await inTransaction(db, async (client) => {
    const [user] = await run<{ roles: string[] }>(client, sql.lockUser, [userId]);
    if (!user) throw new NotFoundError("account", userId);
    await run(client, sql.clearRoles, [userId]);
    await run(client, sql.grantRoles, [userId, wanted]);
    await appendAudit(client, { actor, action: "account.roles_changed", subjectType: "account", subjectId: userId, before: { roles: user.roles }, after: { roles: wanted } });
  });
}

export async function listAccounts(db: Pool): Promise<Account[]> {
  const rows = await run<{ id: string; email: string; name: string; created_at: Date; roles: StaffRole[] }>(db, sql.list, []);
  return rows.map((row) => ({ id: row.id, email: row.email, name: row.name, roles: row.roles, createdAt: row.created_at.toISOString() }));
}
