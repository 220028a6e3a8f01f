"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "@/lib/webhooks/endpoints";

async function redeliver(endpointId: string, deliveryId: string | null): Promise<string> {
  const response = await fetch(`/api/webhook-endpoints/${endpointId}/redeliver`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deliveryId }),
  }).catch(() => null);
  if (!response) return "Refused: the server did not answer";
  const data = (await response.json().catch(() => null)) as { redelivered?: number; detail?: string } | null;
  return response.ok ? `${data?.redelivered ?? 0} queued for redelivery.` : `Refused: ${data?.detail ?? `HTTP ${response.status}`}`;
}

const STATE_WORDS: Record<WebhookDeliveryRecord["state"], string> = { pending: "pending", delivered: "delivered", failed: "failed (not retried)", dead_lettered: "dead-lettered" };

/** An endpoint's deliveries, newest first, each with its tries. */
export function WebhookDeliveries({ endpoint, deliveries }: { endpoint: WebhookEndpointRecord; deliveries: WebhookDeliveryRecord[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const act = async (deliveryId: string | null) => {
    setMessage(await redeliver(endpoint.id, deliveryId));
    router.refresh();
  };
  return (
    <div className="stack">
      <h1>Webhook deliveries</h1>
      <p>
        <code>{endpoint.url}</code> — {endpoint.eventTypes.join(", ")}
        {endpoint.app ? ` — app ${endpoint.app}` : ""}. {endpoint.disabledAt ? "Disabled." : endpoint.failingSince ? `Failing since ${endpoint.failingSince}.` : "Healthy."}
      </p>
      <p>
        {endpoint.counts.pending} pending, {endpoint.counts.delivered} delivered, {endpoint.counts.failed} failed, {endpoint.counts.deadLettered} dead-lettered.
      </p>
      {message && <p role="status">{message}</p>}
      {endpoint.counts.deadLettered > 0 && (
        <button type="button" onClick={() => void act(null)}>
          Redeliver all dead-lettered
        </button>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Tries (status, latency)</th>
            <th scope="col">Next try</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr key={delivery.id} data-testid="webhook-delivery">
              <td>
                {delivery.type}
                <br />
                <code>{delivery.eventId}</code>
              </td>
              <td>{STATE_WORDS[delivery.state]}</td>
              <td>{delivery.attempts}</td>
              <td>
                <ul>
                  {delivery.tries.map((attempt) => (
                    <li key={attempt.term}>
                      {attempt.endedAt === null ? "interrupted (relay stopped mid-send)" : (attempt.statusCode ?? attempt.error)}
                      {attempt.latencyMs !== null ? `, ${attempt.latencyMs} ms` : ""} at {attempt.startedAt}
                    </li>
                  ))}
                </ul>
              </td>
              <td>{delivery.nextAttemptAt ?? "—"}</td>
              <td>
                {(delivery.state === "dead_lettered" || delivery.state === "failed") && (
                  <button type="button" onClick={() => void act(delivery.id)}>
                    Redeliver {delivery.eventId}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
