/**
 * Webhook endpoints: admins register, list, disable and delete them (the secret is shown once);
 * engineers read their deliveries and redeliver dead-lettered ones.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { WEBHOOK_EVENT_TYPES } from "@/lib/webhooks/events";
import { jsonBody, problemResponse, staffResponses, timestamp, uuid } from "./common";

const ok = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });

const eventType = z.enum(WEBHOOK_EVENT_TYPES);
const webhookUrl = z
  .url({ protocol: /^https?$/, error: "an http or https URL" })
  .max(2_000);

export const registerWebhookEndpointBody = z
  .strictObject({
    url: webhookUrl,
    eventTypes: z.array(eventType).min(1, "at least one event type").max(WEBHOOK_EVENT_TYPES.length),
    app: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "an app name as its app keys have it").nullable().default(null),
  })
  .meta({ id: "RegisterWebhookEndpointBody" });

export const webhookEndpointParams = z.object({ id: uuid });

export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    eventTypes: z.array(eventType),
    app: z.string().nullable(),
    createdAt: timestamp,
    createdBy: z.string(),
    disabledAt: timestamp.nullable(),
    disabledBy: z.string().nullable(),
    failingSince: timestamp.nullable(),
    failingLong: z.boolean().meta({ description: "Failing for an hour or more" }),
    counts: z.object({ pending: z.number().int(), delivered: z.number().int(), failed: z.number().int(), deadLettered: z.number().int() }),
  })
  .meta({ id: "WebhookEndpoint" });
export const registeredWebhookEndpointSchema = webhookEndpointSchema
  .extend({ secret: z.string().meta({ description: "whsec_…: shown once, verifies deliveries (verifyWebhook in fenceline/client)" }) })
  .meta({ id: "RegisteredWebhookEndpoint" });
export const webhookEndpointListSchema = z.object({ items: z.array(webhookEndpointSchema) }).meta({ id: "WebhookEndpointList" });

const attemptSchema = z.object({
  term: z.number().int(),
  relay: z.string(),
  startedAt: timestamp,
  endedAt: timestamp.nullable().meta({ description: "Null: the relay stopped mid-send; the delivery is taken over when its lease expires" }),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  latencyMs: z.number().int().nullable(),
});
export const webhookDeliveriesSchema = z
  .object({
    endpoint: webhookEndpointSchema,
    deliveries: z.array(
      z.object({
        id: z.string(),
        eventId: z.string(),
        type: eventType,
        requestId: z.string(),
        state: z.enum(["pending", "delivered", "failed", "dead_lettered"]),
        attempts: z.number().int(),
        nextAttemptAt: timestamp.nullable(),
        lastStatus: z.number().int().nullable(),
        lastError: z.string().nullable(),
        deliveredAt: timestamp.nullable(),
        createdAt: timestamp,
        tries: z.array(attemptSchema),
      }),
    ),
  })
  .meta({ id: "WebhookDeliveries" });

export const redeliverBody = z
  .strictObject({ deliveryId: z.string().regex(/^[1-9]\d{0,17}$/, "a delivery id").nullable().default(null) })
  .meta({ id: "RedeliverBody", description: "One delivery (dead-lettered or failed), or null for every dead-lettered delivery of the endpoint" });
export const redeliverResultSchema = z.object({ redelivered: z.number().int() }).meta({ id: "RedeliverResult" });

export const webhookPaths: ZodOpenApiPathsObject = {
  "/api/admin/webhook-endpoints": {
    get: {
      operationId: "listWebhookEndpoints",
      summary: "Webhook endpoints, newest first (admin)",
      tags: ["admin"],
      responses: { ...staffResponses, "200": ok("Endpoints (never their secrets)", webhookEndpointListSchema) },
    },
    post: {
      operationId: "registerWebhookEndpoint",
      summary: "Register a webhook endpoint (admin; audited)",
      description: "Deliveries follow Standard Webhooks: webhook-id (the event id), webhook-timestamp, webhook-signature (v1, HMAC-SHA256).",
      tags: ["admin"],
      requestBody: jsonBody(registerWebhookEndpointBody),
      responses: { ...staffResponses, "201": ok("The endpoint and its secret, shown once", registeredWebhookEndpointSchema), "400": problemResponse("Invalid body") },
    },
  },
  "/api/admin/webhook-endpoints/{id}": {
    delete: {
      operationId: "deleteWebhookEndpoint",
      summary: "Delete a webhook endpoint and its deliveries (admin; audited)",
      tags: ["admin"],
      requestParams: { path: webhookEndpointParams },
      responses: { ...staffResponses, "204": { description: "Deleted" }, "404": problemResponse("No such endpoint") },
    },
  },
  "/api/admin/webhook-endpoints/{id}/disable": {
    post: {
      operationId: "disableWebhookEndpoint",
      summary: "Stop deliveries to a webhook endpoint (admin; audited)",
      tags: ["admin"],
      requestParams: { path: webhookEndpointParams },
      responses: { ...staffResponses, "200": ok("Disabled (or already disabled)", webhookEndpointSchema), "404": problemResponse("No such endpoint") },
    },
  },
  "/api/webhook-endpoints/{id}/deliveries": {
    get: {
      operationId: "listWebhookDeliveries",
      summary: "An endpoint's latest deliveries with their tries: status codes, latency, next try (engineer)",
      tags: ["webhooks"],
      requestParams: { path: webhookEndpointParams },
      responses: { ...staffResponses, "200": ok("Deliveries, newest first", webhookDeliveriesSchema), "404": problemResponse("No such endpoint") },
    },
  },
  "/api/webhook-endpoints/{id}/redeliver": {
    post: {
      operationId: "redeliverWebhooks",
      summary: "Send dead-lettered deliveries again, one or all (engineer; audited)",
      tags: ["webhooks"],
      requestParams: { path: webhookEndpointParams },
      requestBody: jsonBody(redeliverBody),
      responses: { ...staffResponses, "200": ok("How many were made pending", redeliverResultSchema), "400": problemResponse("Invalid body"), "404": problemResponse("No such endpoint") },
    },
  },
};
