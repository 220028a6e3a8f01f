/** /webhooks/{id} — one endpoint's deliveries: attempts, status codes, latency, next try; redelivery (engineers). */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { WebhookDeliveries } from "@/components/engineer/webhook-deliveries";
import { authorizePage } from "@/lib/auth/page";
import { pool } from "@/lib/db/pool";
import { NotFoundError } from "@/lib/engine/errors";
import { webhookDeliveries } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Webhook deliveries", robots: { index: false, follow: false } };

export default async function WebhookDeliveriesPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  await authorizePage("technical:read", `/webhooks/${id}`);
  const view = await webhookDeliveries(pool(), id).catch((error: unknown) => {
    if (error instanceof NotFoundError) notFound();
    throw error;
  });
  return <WebhookDeliveries endpoint={view.endpoint} deliveries={view.deliveries} />;
}
