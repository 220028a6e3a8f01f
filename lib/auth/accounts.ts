/**
 * Staff accounts, managed by admins (and seeded in demo mode). A user, its password credential
 * (hashed with better-auth's scrypt) and its roles are written in one transaction with the audit
 * entry that records the change. Passwords never appear in the audit log. An account with no
 * role left can sign in but open nothing; roles are read on every request, so a change applies at once.
 * Writes are named SQL in one transaction with their audit entry; the list is a Prisma read of
 * users with their roles (decision 011).
 */
import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { hashPassword } from "better-auth/crypto";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
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
} as const;

const LIST_LIMIT = 500;

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

/** Accounts by email, each with its roles in order. */
export async function listAccounts(db: PrismaClient): Promise<Account[]> {
  const users = await db.authUser.findMany({
    select: { id: true, email: true, name: true, createdAt: true, roles: { select: { role: true }, orderBy: { role: "asc" } } },
    orderBy: { email: "asc" },
    take: LIST_LIMIT,
  });
  return users.map((user) => ({ id: user.id, email: user.email, name: user.name, roles: user.roles.map((held) => held.role), createdAt: user.createdAt.toISOString() }));
}
