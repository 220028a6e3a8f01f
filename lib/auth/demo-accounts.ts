/**
 * Demo mode only (`npm start`): one account per role, so the dashboard can be tried at once.
 * Their passwords are new on every start (or FENCELINE_DEMO_PASSWORD, which the browser tests
 * set) and printed by the start script; an account left from an earlier run gets the new one.
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { hashPassword } from "better-auth/crypto";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run } from "@/lib/engine/db";
import { createAccount } from "./accounts";
import type { StaffRole } from "./roles";

export const DEMO_ACCOUNTS: readonly { email: string; name: string; roles: StaffRole[] }[] = [
  { email: "support@fenceline.test", name: "Demo support", roles: ["support"] },
  { email: "engineer@fenceline.test", name: "Demo engineer", roles: ["engineer"] },
  { email: "admin@fenceline.test", name: "Demo admin", roles: ["admin"] },
];

const ACTOR = "npm start (demo accounts)";

const resetPassword = {
  name: "demo_reset_password",
  text: `UPDATE auth_account a SET password = $2, updated_at = now()
         FROM auth_user u
         WHERE u.id = a.user_id AND u.email = $1 AND a.provider_id = 'credential'
         RETURNING u.id`,
} as const;

export async function seedDemoAccounts(db: Pool, fixedPassword?: string): Promise<{ email: string; password: string; roles: StaffRole[] }[]> {
  const seeded = [];
  for (const account of DEMO_ACCOUNTS) {
    const password = fixedPassword || randomBytes(12).toString("base64url");
    const hash = await hashPassword(password);
    const reset = await inTransaction(db, async (client) => {
      const [row] = await run<{ id: string }>(client, resetPassword, [account.email, hash]);
      if (row) await appendAudit(client, { actor: ACTOR, action: "account.password_reset", subjectType: "account", subjectId: row.id, before: null, after: { email: account.email } });
      return Boolean(row);
    });
    if (!reset) await createAccount(db, { ...account, password }, ACTOR);
    seeded.push({ email: account.email, password, roles: account.roles });
  }
  return seeded;
}
