/**
 * Events from outside (lib/events): an app sends a named event with its correlation key to the
 * requests that wait for it (`fenceline/client` events.send), or a third party posts a payload to a
 * wait's one-time URL. Either way the event is durable before the answer, and a repeated send with
 * the same Idempotency-Key is the same event.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { EVENT_NAME, MAX_EVENT_KEY, MAX_EVENT_PAYLOAD_BYTES } from "@/lib/events/definition";
import type { SentEvent } from "@/lib/events/types";
import { HttpProblem } from "../problems";
import { problemResponse } from "./common";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "./public";

const timestamp = z.iso.datetime({ offset: true });

/** A payload's size as the server stores it: its JSON text in UTF-8 bytes. */
const payloadBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload ?? null), "utf8");

const payload = z.unknown().superRefine((value, ctx) => {
  if (payloadBytes(value) > MAX_EVENT_PAYLOAD_BYTES) ctx.addIssue({ code: "custom", message: `must be at most ${MAX_EVENT_PAYLOAD_BYTES / 1024} KiB as JSON` });
});

export const sendEventBody = z
  .strictObject({
    name: z.string().regex(EVENT_NAME, "must be 1–100 lower-case letters, digits, '.', '_' or '-'").meta({ description: "The event's name, e.g. warehouse.confirmed: one a registered step waits for" }),
    key: z.string().min(1).max(MAX_EVENT_KEY).meta({ description: "The correlation key the waiting request computed, e.g. an order id" }),
    payload: payload.meta({ description: `Any JSON, at most ${MAX_EVENT_PAYLOAD_BYTES / 1024} KiB; checked against the waiting steps' payload schema` }),
  })
  .meta({ id: "SendEventBody" });

export const sentEventSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    key: z.string(),
    receivedAt: timestamp,
    duplicate: z.boolean().meta({ description: "True when the Idempotency-Key named an event sent before: this is that event" }),
    consumedBy: z
      .object({ requestId: z.uuid(), step: z.string() })
      .nullable()
      .meta({ description: "The waiting step it settled, or null while it is kept for a wait that has not begun" }),
    keepUntil: timestamp.meta({ description: "Until when it is kept for a wait that has not begun" }),
  })
  .meta({ id: "SentEvent" });
const _sameEvent: (event: SentEvent) => z.input<typeof sentEventSchema> = (event) => event;
void _sameEvent;

export const waitUrlParams = z.object({ token: z.string().min(1).max(100).meta({ description: "The wait's one-time token" }) });

/** A one-time URL's body: the payload itself, bounded like any event's. */
export function waitUrlPayload(value: unknown): unknown {
  if (payloadBytes(value) > MAX_EVENT_PAYLOAD_BYTES) {
    throw new HttpProblem("invalid-request", `payload: must be at most ${MAX_EVENT_PAYLOAD_BYTES / 1024} KiB as JSON`, {
      issues: [{ path: "payload", message: `must be at most ${MAX_EVENT_PAYLOAD_BYTES / 1024} KiB as JSON` }],
    });
  }
  return value;
}

const idempotencyHeader = z.object({
  "idempotency-key": z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).optional().meta({ description: "1–200 printable ASCII characters: the same key sends the same event once" }),
});

export const eventPaths: ZodOpenApiPathsObject = {
  "/api/events": {
    post: {
      operationId: "sendEvent",
      summary: "Send an event to the requests that wait for it",
      description:
        "Records the event (durable before the answer) and settles the oldest step waiting for its name and key, or keeps it " +
        "for a wait that begins later. Needs an app key with the `events:send` scope. With an Idempotency-Key, sending again " +
        "returns the same event (200, duplicate: true); the key with another name, key or payload is refused (422).",
      security: [{ appKey: [] }],
      tags: ["public"],
      requestParams: { header: idempotencyHeader },
      requestBody: { content: { "application/json": { schema: sendEventBody } } },
      responses: {
        "202": { description: "Accepted", content: { "application/json": { schema: sentEventSchema } } },
        "200": { description: "The event this Idempotency-Key already sent", content: { "application/json": { schema: sentEventSchema } } },
        "400": problemResponse("Invalid body (name, key too long, payload over 32 KiB) or Idempotency-Key, naming the field"),
        "401": problemResponse("Missing, unknown or revoked app key"),
        "403": problemResponse("The app key lacks the events:send scope"),
        "413": problemResponse("Body too large"),
        "415": problemResponse("Body is not JSON"),
        "422": problemResponse("No registered step waits for this name (code unknown-event), a payload that does not match the waiting steps' schema (code invalid-input, with issues), or an Idempotency-Key reused for another event (code event-key-reused)"),
      },
    },
  },
  "/api/events/url/{token}": {
    post: {
      operationId: "sendEventThroughWaitUrl",
      summary: "Settle a wait through its one-time URL",
      description:
        "The body is the event's payload. Works once: the URL is unguessable, single use, and ends with its wait (settled, " +
        "timed out or cancelled). Needs no key: the URL is the credential.",
      tags: ["public"],
      requestParams: { path: waitUrlParams, header: idempotencyHeader },
      requestBody: { content: { "application/json": { schema: z.unknown() } } },
      responses: {
        "202": { description: "Accepted: the wait is settled", content: { "application/json": { schema: sentEventSchema } } },
        "200": { description: "The event this Idempotency-Key already sent through this URL", content: { "application/json": { schema: sentEventSchema } } },
        "400": problemResponse("Invalid body or Idempotency-Key"),
        "410": problemResponse("The URL was used, or its wait ended (code wait-url-gone)"),
        "413": problemResponse("Body too large"),
        "415": problemResponse("Body is not JSON"),
        "422": problemResponse("A payload that does not match the waiting step's schema (code invalid-input, with issues)"),
      },
    },
  },
};
