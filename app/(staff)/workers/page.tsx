import type { Metadata } from "next";
import { WebhookHealth } from "@/components/engineer/webhook-health";
import { pool } from "@/lib/db/pool";
import { readPool } from "@/lib/db/read-pool";
import { demoMode } from "@/lib/lab/demo";
import { listWorkers } from "@/lib/workers/list";
import { listWebhookEndpoints } from "@/lib/webhooks/endpoints";
import { WorkersView } from "@/components/engineer/workers-view";
import { authorizePage } from "@/lib/auth/page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Workers", robots: { index: false, follow: false } };

export default async function WorkersPage() {
  await authorizePage("technical:read", "/workers");
  const [workers, endpoints] = await Promise.all([listWorkers(readPool(), { lab: demoMode() !== null }), listWebhookEndpoints(pool())]);
  return (
    <div className="stack">
      <h1>Workers</h1>
      <WorkersView initial={workers} />
      <WebhookHealth endpoints={endpoints} />
    </div>
  );
}
