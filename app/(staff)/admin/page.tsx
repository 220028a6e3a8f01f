/** /admin — staff accounts and their roles, worker tokens, app keys, scrape tokens, webhook endpoints and fair share per kind (admins). */
import type { Metadata } from "next";
import { AdminConsole } from "@/components/admin/admin-console";
import { FairShareSettings } from "@/components/admin/fair-share-settings";
import { WebhookEndpoints } from "@/components/admin/webhook-endpoints";
import { listAccounts } from "@/lib/auth/accounts";
import { listAppKeys } from "@/lib/auth/app-keys";
import { authorizePage } from "@/lib/auth/page";
import { listScrapeTokens } from "@/lib/auth/scrape-tokens";
import { listWorkerTokens } from "@/lib/auth/worker-tokens";
import { pool, prisma } from "@/lib/db/pool";
import { listFairShare } from "@/lib/fair-share/settings";
import { listWebhookEndpoints } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Admin" };

export default async function AdminPage() {
  await authorizePage("accounts:manage", "/admin");
  const [accounts, tokens, appKeys, scrapeTokens, endpoints, fairShare] = await Promise.all([
    listAccounts(prisma()),
    listWorkerTokens(prisma()),
    listAppKeys(prisma()),
    listScrapeTokens(prisma()),
    listWebhookEndpoints(pool()),
    listFairShare(pool()),
  ]);
  return (
    <>
      <AdminConsole accounts={accounts} tokens={tokens} appKeys={appKeys} scrapeTokens={scrapeTokens} />
      <WebhookEndpoints endpoints={endpoints} />
      <FairShareSettings kinds={fairShare} />
    </>
  );
}
