/**
 * The end user's API: create a request (repeatable with an Idempotency-Key) and follow it by its
 * tracking token. Nothing here exposes an engine field: the tracking view is the projection's
 * DTO (lib/projection), and an unknown token is the same 404 as any other not-found.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { deliveryRequestSchema } from "@/lib/demo/workflow";
import { WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import type { TrackingView } from "@/lib/projection/types";
import { HttpProblem } from "../problems";
import { problemResponse } from "./common";

const timestamp = z.iso.datetime({ offset: true });

// ---------------------------------------------------------------------------------------------
// Creating a request

export const createRequestBody = deliveryRequestSchema.meta({
  id: "CreateRequestBody",
  description: "A delivery: a message to a recipient, sent through one of the demo destination's contracts.",
});

export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,200}$/;

/** The Idempotency-Key header: absent → null; 1–200 printable ASCII characters; anything else → 400. */
export function idempotencyKeyHeader(value: string | null): string | null {
  if (value === null) return null;
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new HttpProblem("invalid-request", `header Idempotency-Key: must be 1–${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters`, {
      issues: [{ path: "headers.idempotency-key", message: `must be 1–${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters` }],
    });
  }
  return value;
}

export const createdRequestSchema = z
  .object({
    id: z.uuid(),
    trackingToken: z.string().meta({ description: "Unguessable; the only key an end user needs. Keep it private." }),
    trackUrl: z.string().meta({ description: "The end user's page: /track/<trackingToken>" }),
    status: z.enum(WORKFLOW_STATUSES),
    createdAt: timestamp,
  })
  .meta({ id: "CreatedRequest" });

// ---------------------------------------------------------------------------------------------
// Tracking a request

export const TRACKING_HEADLINES = ["preparing", "waiting", "recovering", "needs_review", "completed", "cancelled", "not_completed"] as const;

export const trackingViewSchema = z
  .object({
    reference: z.string().meta({ description: "Short reference to quote to support, e.g. FL-0F3A-9C2E" }),
    title: z.string(),
    headline: z.object({
      state: z.enum(TRACKING_HEADLINES),
      label: z.string().meta({ description: "Preparing, Waiting on an external service, Recovering execution, Completed, …" }),
      tone: z.enum(["neutral", "attention", "ok", "stopped"]),
    }),
    happening: z.string().meta({ description: "What is happening now, in plain words" }),
    next: z.string().meta({ description: "What happens next" }),
    reason: z.string().nullable().meta({ description: "Why it stopped, when a person wrote a reason for the customer" }),
    milestones: z.array(
      z.object({
        key: z.string(),
        label: z.string(),
        status: z.enum(["done", "skipped", "current", "upcoming", "attention", "stopped"]),
        at: timestamp.nullable(),
      }),
    ),
    createdAt: timestamp,
    updatedAt: timestamp,
    terminal: z.boolean().meta({ description: "True when nothing more will change: stop polling" }),
  })
  .meta({ id: "TrackingView", description: "What the end user sees of their request" });

// The schema and the projection's type must describe the same object.
export type TrackingViewDto = z.output<typeof trackingViewSchema>;
const _sameShape: (view: TrackingView) => z.input<typeof trackingViewSchema> = (view) => view;
void _sameShape;

export const trackParams = z.object({ token: z.string().meta({ description: "The tracking token" }) });

/** The one not-found answer for tracking: the same for a malformed, unknown or foreign token. */
export const trackingNotFound = () => new HttpProblem("not-found", "no request is tracked at this address");

export const publicPaths: ZodOpenApiPathsObject = {
  "/api/requests": {
    post: {
      operationId: "createRequest",
      summary: "Create a request",
      description:
        "Creates a delivery request and returns its tracking token. With an Idempotency-Key, repeating the call returns the " +
        "same request (200); reusing the key with a different input is refused (422).",
      tags: ["public"],
      requestParams: {
        header: z.object({
          "idempotency-key": z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).optional().meta({ description: "1–200 printable ASCII characters" }),
        }),
      },
      requestBody: { content: { "application/json": { schema: createRequestBody } } },
      responses: {
        "201": { description: "Created", content: { "application/json": { schema: createdRequestSchema } } },
        "200": { description: "The request this Idempotency-Key already created", content: { "application/json": { schema: createdRequestSchema } } },
        "400": problemResponse("Invalid body or Idempotency-Key"),
        "413": problemResponse("Body too large"),
        "415": problemResponse("Body is not JSON"),
        "429": problemResponse("Too many requests from this client: see Retry-After"),
        "422": problemResponse("Idempotency-Key reused with a different input"),
      },
    },
  },
  "/api/track/{token}": {
    get: {
      operationId: "trackRequest",
      summary: "Follow a request by its tracking token",
      description: "The end user's view: a headline, what is happening and what happens next, and milestones. Poll until `terminal`.",
      tags: ["public"],
      requestParams: { path: trackParams },
      responses: {
        "200": { description: "The request as its end user sees it", content: { "application/json": { schema: trackingViewSchema } } },
        "404": problemResponse("No request is tracked at this token"),
      },
    },
  },
};
