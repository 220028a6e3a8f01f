"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { WebhookEndpointRecord } from "@/lib/webhooks/endpoints";
import { WEBHOOK_EVENT_TYPES } from "@/lib/webhooks/events";
import { call, type CallResult } from "./call";

/** /admin's webhook section: register (URL, event types, optional app), list, disable, delete. */
export function WebhookEndpoints({ endpoints }: { endpoints: WebhookEndpointRecord[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);

  const after = (result: CallResult, done: string) => {
    setMessage(result.ok ? done : `Refused: ${result.detail}`);
    if (result.ok) router.refresh();
  };

  async function register(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const eventTypes = WEBHOOK_EVENT_TYPES.filter((type) => form.get(`event-${type}`) === "on");
    const app = String(form.get("app") ?? "").trim();
    const result = await call("POST", "/api/admin/webhook-endpoints", { url: form.get("url"), eventTypes, app: app || null });
    setSecret(result.ok ? (result.data as { secret: string }).secret : null);
    after(result, "Endpoint registered: copy its signing secret now, it is not shown again.");
  }

  return (
    <section className="stack" aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhook endpoints</h2>
      {message && <p role="status">{message}</p>}
      <table>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">App</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((endpoint) => (
            <tr key={endpoint.id}>
              <td>
                <Link href={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
              </td>
              <td>{endpoint.eventTypes.join(", ")}</td>
              <td>{endpoint.app ?? "every app"}</td>
              <td>{endpoint.disabledAt ? `disabled ${endpoint.disabledAt} by ${endpoint.disabledBy}` : endpoint.failingSince ? `failing since ${endpoint.failingSince}` : "active"}</td>
              <td className="row">
                {!endpoint.disabledAt && (
                  <button type="button" onClick={async () => after(await call("POST", `/api/admin/webhook-endpoints/${endpoint.id}/disable`), `${endpoint.url} disabled.`)}>
                    Disable {endpoint.url}
                  </button>
                )}
                <button type="button" onClick={async () => after(await call("DELETE", `/api/admin/webhook-endpoints/${endpoint.id}`), `${endpoint.url} deleted.`)}>
                  Delete {endpoint.url}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={register}>
        <h3>New webhook endpoint</h3>
        <label className="stack">
          <span>URL</span>
          <input name="url" type="url" required placeholder="https://example.com/fenceline/webhooks" />
        </label>
        <fieldset className="row">
          <legend>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type}>
              <input type="checkbox" name={`event-${type}`} defaultChecked /> {type}
            </label>
          ))}
        </fieldset>
        <label className="stack">
          <span>App (optional: only that app&apos;s requests)</span>
          <input name="app" pattern="[a-z0-9][a-z0-9._\-]{0,62}" />
        </label>
        <button type="submit">Register endpoint</button>
        {secret && (
          <p>
            Signing secret (shown once): <code data-testid="new-webhook-secret">{secret}</code>
          </p>
        )}
      </form>
    </section>
  );
}
