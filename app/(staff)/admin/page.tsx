/** /admin — staff accounts and their roles, worker tokens and app keys (admins). */
import type { Metadata } from "next";
import { AdminConsole } from "@/components/admin/admin-console";
import { listAccounts } from "@/lib/auth/accounts";
import { listAppKeys } from "@/lib/auth/app-keys";
import { authorizePage } from "@/lib/auth/page";
import { listWorkerTokens } from "@/lib/auth/worker-tokens";
import { pool } from "@/lib/db/pool";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin" };

export default async function AdminPage() {
  await authorizePage("accounts:manage", "/admin");
  const [accounts, tokens, appKeys] = await Promise.all([listAccounts(pool()), listWorkerTokens(pool()), listAppKeys(pool())]);
  return <AdminConsole accounts={accounts} tokens={tokens} appKeys={appKeys} />;
}
