/**
 * Webhook endpoints: where an app hears about its requests. An admin registers one (URL, event
 * types, optionally the app whose requests alone it receives); its signing secret is shown once.
 * Registering, disabling, deleting and redelivering are audited in the transaction of the change.
 * Engineers read deliveries per endpoint.
 */
import type { Pool } from "pg";
import { appendAudit } from "@/lib/audit/log";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import type { WebhookEventType } from "./events";
import { newWebhookSecret } from "./signature";
import * as sql from "./sql";

export type WebhookEndpointRecord = {
  id: string;
  url: string;
  eventTypes: WebhookEventType[];
  app: string | null;
  createdAt: string;
  createdBy: string;
  disabledAt: string | null;
  disabledBy: string | null;
  /** Since when its deliveries have been failing (null while they succeed). */
  failingSince: string | null;
  /** Failing for an hour or more (database clock). */
  failingLong: boolean;
  counts: { pending: number; delivered: number; failed: number; deadLettered: number };
};

type EndpointRow = {
  id: string; url: string; event_types: WebhookEventType[]; app: string | null; created_at: Date; created_by: string;
  disabled_at: Date | null; disabled_by: string | null; failing_since: Date | null; failing_long: boolean;
  pending: number; delivered: number; failed: number; dead_lettered: number;
};

const recordOf = (row: EndpointRow): WebhookEndpointRecord => ({
  id: row.id,
  url: row.url,
  eventTypes: row.event_types,
  app: row.app,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
  disabledAt: row.disabled_at?.toISOString() ?? null,
  disabledBy: row.disabled_by,
  failingSince: row.failing_since?.toISOString() ?? null,
  failingLong: row.failing_long,
  counts: { pending: row.pending, delivered: row.delivered, failed: row.failed, deadLettered: row.dead_lettered },
});

const COLUMNS = `ep.id, ep.url, ep.event_types, ep.app, ep.created_at, ep.created_by, ep.disabled_at, ep.disabled_by, ep.failing_since,
  coalesce(ep.failing_since <= now() - interval '1 hour', false) AS failing_long,
  (SELECT count(*)::int FROM webhook_delivery d WHERE d.endpoint_id = ep.id AND d.state = 'pending') AS pending,
  (SELECT count(*)::int FROM webhook_delivery d WHERE d.endpoint_id = ep.id AND d.state = 'delivered') AS delivered,
  (SELECT count(*)::int FROM webhook_delivery d WHERE d.endpoint_id = ep.id AND d.state = 'failed') AS failed,
  (SELECT count(*)::int FROM webhook_delivery d WHERE d.endpoint_id = ep.id AND d.state = 'dead_lettered') AS dead_lettered`;

const statements = {
  insert: {
    name: "webhook_endpoint_insert",
    text: `INSERT INTO webhook_endpoint (url, event_types, app, secret, created_by) VALUES ($1, $2::text[], $3, $4, $5) RETURNING id`,
  },
  byId: { name: "webhook_endpoint_by_id", text: `SELECT ${COLUMNS} FROM webhook_endpoint ep WHERE ep.id = $1::uuid` },
  list: { name: "webhook_endpoint_list", text: `SELECT ${COLUMNS} FROM webhook_endpoint ep ORDER BY ep.created_at DESC LIMIT 200` },
  disable: {
    name: "webhook_endpoint_disable",
    text: `UPDATE webhook_endpoint SET disabled_at = now(), disabled_by = $2 WHERE id = $1::uuid AND disabled_at IS NULL RETURNING id`,
  },
  delete: { name: "webhook_endpoint_delete", text: `DELETE FROM webhook_endpoint WHERE id = $1::uuid RETURNING id, url` },
  deliveries: {
    name: "webhook_endpoint_deliveries",
    text: `
SELECT d.id::text, d.event_id, e.type, e.workflow_id, d.state, d.attempts, d.next_attempt_at, d.last_status, d.last_error,
       d.delivered_at, d.created_at,
       coalesce((SELECT json_agg(json_build_object('term', a.lease_term, 'relay', a.relay, 'startedAt', a.started_at, 'endedAt', a.ended_at,
                                                   'statusCode', a.status_code, 'error', a.error, 'latencyMs', a.latency_ms) ORDER BY a.lease_term DESC)
                 FROM (SELECT * FROM webhook_attempt a WHERE a.delivery_id = d.id ORDER BY a.lease_term DESC LIMIT 10) a), '[]') AS attempts_seen
FROM webhook_delivery d JOIN outbox_event e ON e.id = d.event_id
WHERE d.endpoint_id = $1::uuid
ORDER BY d.id DESC
LIMIT 100`,
  },
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function endpointById(db: Queryable, id: string): Promise<WebhookEndpointRecord> {
  const [row] = UUID.test(id) ? await run<EndpointRow>(db, statements.byId, [id]) : [];
  if (!row) throw new NotFoundError("webhook endpoint", id);
  return recordOf(row);
}

export type NewWebhookEndpoint = { readonly url: string; readonly eventTypes: readonly WebhookEventType[]; readonly app: string | null };

/** Registers an endpoint; the answer carries its signing secret, which is never shown again. */
export async function registerWebhookEndpoint(db: Pool, endpoint: NewWebhookEndpoint, actor: string): Promise<WebhookEndpointRecord & { secret: string }> {
  const secret = newWebhookSecret();
  return inTransaction(db, async (client) => {
    const [row] = await run<{ id: string }>(client, statements.insert, [endpoint.url, [...new Set(endpoint.eventTypes)], endpoint.app, secret, actor]);
    await appendAudit(client, { actor, action: "webhook_endpoint.registered", subjectType: "webhook_endpoint", subjectId: row!.id, before: null, after: { ...endpoint } });
    return { ...(await endpointById(client, row!.id)), secret };
  });
}

export async function listWebhookEndpoints(db: Queryable): Promise<WebhookEndpointRecord[]> {
  return (await run<EndpointRow>(db, statements.list, [])).map(recordOf);
}

/** Stops deliveries to an endpoint (they stay, pending, for a later look); disabling twice changes nothing. */
export async function disableWebhookEndpoint(db: Pool, id: string, actor: string): Promise<WebhookEndpointRecord> {
  return inTransaction(db, async (client) => {
    const before = await endpointById(client, id);
    const [row] = await run(client, statements.disable, [id, actor]);
    if (row) await appendAudit(client, { actor, action: "webhook_endpoint.disabled", subjectType: "webhook_endpoint", subjectId: id, before: { disabledAt: null }, after: { url: before.url } });
    return endpointById(client, id);
  });
}

/** Deletes an endpoint and its deliveries. */
export async function deleteWebhookEndpoint(db: Pool, id: string, actor: string): Promise<void> {
  await inTransaction(db, async (client) => {
    const before = await endpointById(client, id);
    await run(client, statements.delete, [id]);
    await appendAudit(client, { actor, action: "webhook_endpoint.deleted", subjectType: "webhook_endpoint", subjectId: id, before: { url: before.url, eventTypes: before.eventTypes, app: before.app }, after: null });
  });
}

export type WebhookAttemptRecord = { term: number; relay: string; startedAt: string; endedAt: string | null; statusCode: number | null; error: string | null; latencyMs: number | null };
export type WebhookDeliveryRecord = {
  id: string; eventId: string; type: WebhookEventType; requestId: string; state: "pending" | "delivered" | "failed" | "dead_lettered";
  attempts: number; nextAttemptAt: string | null; lastStatus: number | null; lastError: string | null; deliveredAt: string | null; createdAt: string;
  tries: WebhookAttemptRecord[];
};

type DeliveryRow = {
  id: string; event_id: string; type: WebhookEventType; workflow_id: string; state: WebhookDeliveryRecord["state"]; attempts: number;
  next_attempt_at: Date; last_status: number | null; last_error: string | null; delivered_at: Date | null; created_at: Date; attempts_seen: WebhookAttemptRecord[];
};

/** An endpoint and its latest deliveries, newest first, each with its latest tries. */
export async function webhookDeliveries(db: Queryable, endpointId: string): Promise<{ endpoint: WebhookEndpointRecord; deliveries: WebhookDeliveryRecord[] }> {
  const endpoint = await endpointById(db, endpointId);
  const rows = await run<DeliveryRow>(db, statements.deliveries, [endpointId]);
  return {
    endpoint,
    deliveries: rows.map((row) => ({
      id: row.id,
      eventId: row.event_id,
      type: row.type,
      requestId: row.workflow_id,
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: row.state === "pending" ? row.next_attempt_at.toISOString() : null,
      lastStatus: row.last_status,
      lastError: row.last_error,
      deliveredAt: row.delivered_at?.toISOString() ?? null,
      createdAt: row.created_at.toISOString(),
      tries: row.attempts_seen.map((attempt) => ({ ...attempt, term: Number(attempt.term), startedAt: new Date(attempt.startedAt).toISOString(), endedAt: attempt.endedAt && new Date(attempt.endedAt).toISOString() })),
    })),
  };
}

/** Sends dead-lettered deliveries of an endpoint again: all of them, or one (dead-lettered or failed). Answers how many. */
export async function redeliverWebhooks(db: Pool, endpointId: string, deliveryId: string | null, actor: string): Promise<{ redelivered: number }> {
  return inTransaction(db, async (client) => {
    await endpointById(client, endpointId);
    const rows = await run<{ id: string }>(client, sql.redeliver, [endpointId, deliveryId]);
    if (rows.length > 0) await appendAudit(client, { actor, action: "webhook.redelivered", subjectType: "webhook_endpoint", subjectId: endpointId, before: null, after: { deliveries: rows.map((row) => row.id) } });
    return { redelivered: rows.length };
  });
}

/** Endpoints failing for an hour or more, for the workers page. */
export async function longFailingEndpoints(db: Queryable): Promise<WebhookEndpointRecord[]> {
  return (await listWebhookEndpoints(db)).filter((endpoint) => endpoint.failingLong && !endpoint.disabledAt);
}
