/** /admin — staff accounts and their roles, worker tokens and webhook endpoints (admins). */
import type { Metadata } from "next";
import { AdminConsole } from "@/components/admin/admin-console";
import { WebhookEndpoints } from "@/components/admin/webhook-endpoints";
import { listAccounts } from "@/lib/auth/accounts";
import { authorizePage } from "@/lib/auth/page";
import { listWorkerTokens } from "@/lib/auth/worker-tokens";
import { pool } from "@/lib/db/pool";
import { listWebhookEndpoints } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin" };

export default async function AdminPage() {
  await authorizePage("accounts:manage", "/admin");
  const [accounts, tokens, endpoints] = await Promise.all([listAccounts(pool()), listWorkerTokens(pool()), listWebhookEndpoints(pool())]);
  return (
    <>
      <AdminConsole accounts={accounts} tokens={tokens} />
      <WebhookEndpoints endpoints={endpoints} />
    </>
  );
}
