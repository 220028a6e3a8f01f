/** The request's page: its read model (GET /api/requests/{id}/timeline) and the operators' actions on one request. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import type { RequestPageData, WebhookEventLine } from "@/lib/requests/page/types";
import {
  ATTEMPT_MODES,
  ATTEMPT_OUTCOMES,
  CHECKPOINTS,
  EFFECT_OBSERVATIONS,
  LEASE_END_REASONS,
  RECOVERY_CATEGORIES,
  RECOVERY_TRIGGERS,
  REJECTION_REASONS,
  REVIEW_STATUSES,
  STEP_STATES,
  VERIFICATION_METHODS,
  WORKFLOW_STATUSES,
} from "@/lib/engine/vocabulary";
import { MAX_RERUN_BUDGET } from "@/lib/requests/page/actions";
import { booleanFlag, operation, term, timestamp, uuid } from "../common";
import { trackingViewSchema } from "../public";
import { eventWaitSchema, timerWaitSchema } from "./waits";

const stepWaitSchema = z.union([timerWaitSchema, eventWaitSchema.omit({ events: true, moreEvents: true })]).meta({ id: "StepWaitLine" });

export const requestPageParams = z.object({ id: uuid });
export const requestPageQuery = z
  .strictObject({ full: booleanFlag.optional().meta({ description: "true: the input and each result up to 1,000,000 characters instead of 2,000" }) })
  .meta({ id: "RequestTimelineQuery" });

const bounded = z
  .object({ text: z.string(), chars: z.number().int(), truncated: z.boolean() })
  .meta({ id: "BoundedJson", description: "A JSON value's text, cut at a bound when truncated (chars is its whole length)" });

const attemptBar = z.object({
  id: uuid,
  fencingTerm: term,
  epoch: term,
  ownerSessionId: uuid,
  mode: z.enum(ATTEMPT_MODES),
  checkpoint: z.enum(CHECKPOINTS),
  startedAt: timestamp,
  invocationBeganAt: timestamp.nullable(),
  responseObservedAt: timestamp.nullable(),
  observedEffect: z.enum(EFFECT_OBSERVATIONS).nullable(),
  endedAt: timestamp.nullable(),
  expiresAt: timestamp,
  outcome: z.enum(ATTEMPT_OUTCOMES).nullable(),
  outcomeReason: z.string().nullable(),
  endReason: z.enum(LEASE_END_REASONS).nullable(),
  externalReference: z.string().nullable(),
});

const stepLine = z.object({
  id: uuid,
  name: z.string(),
  position: z.number().int(),
  adapter: z.string(),
  operation: z.string(),
  stepClass: z.string(),
  state: z.enum(STEP_STATES),
  stateReason: z.string().nullable(),
  fencingTerm: term,
  attemptsStarted: z.number().int(),
  attemptBudget: z.number().int(),
  requestIdentity: z.string().nullable(),
  dependsOn: z.array(uuid),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
  receipt: z
    .object({ id: uuid, attemptId: uuid.nullable(), verificationMethod: z.enum(VERIFICATION_METHODS), externalReference: z.string().nullable(), fencingTerm: term, epoch: term, at: timestamp })
    .nullable(),
  result: bounded.nullable(),
  wait: stepWaitSchema.nullable(),
  attempts: z.array(attemptBar),
  lateObservations: z.array(z.object({ id: z.number().int(), fencingTerm: term, operation: z.string(), externalReference: z.string().nullable(), at: timestamp })),
  fencingRejections: z.array(
    z.object({ id: z.number().int(), operation: z.string(), presentedTerm: term, currentTerm: term.nullable(), reason: z.enum(REJECTION_REASONS), at: timestamp }),
  ),
  recoveryDecisions: z.array(
    z.object({
      id: z.number().int(),
      fencingTerm: term,
      trigger: z.enum(RECOVERY_TRIGGERS),
      category: z.enum(RECOVERY_CATEGORIES),
      reason: z.string().nullable(),
      checkpoint: z.string().nullable(),
      decidedAt: timestamp,
      decidedBy: z.string(),
    }),
  ),
});

const waitLine = z
  .object({
    stepId: uuid,
    room: z.string().meta({ description: "The room that holds it: timer, event, children" }),
    startedAt: timestamp,
    waitingFor: z.string().meta({ description: "What it waits for, in words" }),
    until: timestamp.nullable().meta({ description: "The latest it waits until (a timer's due time, an event wait's timeout); null when no time ends it" }),
    endedAt: timestamp.nullable(),
    ending: z.string().nullable().meta({ description: "How it ended, in words (fired, event received, children ended, timed out, cancelled); null while it waits" }),
  })
  .meta({ id: "WaitLine" });

export const requestTimelineSchema = z
  .object({
    dbNow: timestamp,
    version: z.string().meta({ description: "Send it back with an action: an action on an older version is refused (409 stale-request-view)" }),
    request: z.object({
      id: uuid,
      kind: z.string(),
      kindVersion: z.number().int(),
      status: z.enum(WORKFLOW_STATUSES),
      statusReason: z.string().nullable(),
      requester: z.string().meta({ description: "The app that created it" }),
      idempotencyKey: z.string().nullable(),
      trackingToken: z.string(),
      createdAt: timestamp,
      updatedAt: timestamp,
      deadlineAt: timestamp.nullable(),
      priority: z.number().int(),
      concurrencyKey: z.string().nullable(),
      inputDigest: z.string(),
      input: bounded,
    }),
    projection: trackingViewSchema.nullable(),
    steps: z.array(stepLine),
    waits: z.array(waitLine).meta({ description: "Every wait of its steps (timers, event waits, child waits), in the order they began" }),
    reviewCases: z.array(
      z.object({
        id: uuid,
        stepId: uuid,
        reason: z.string(),
        status: z.enum(REVIEW_STATUSES),
        assignee: z.string().nullable(),
        openedAt: timestamp,
        reviewBy: timestamp,
        resolution: z.string().nullable(),
        resolvedBy: z.string().nullable(),
        resolvedAt: timestamp.nullable(),
        externalReference: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: "RequestTimeline" });
const _timelineShape: (data: RequestPageData) => z.input<typeof requestTimelineSchema> = (data) => data;

export const requestWebhooksSchema = z
  .object({
    items: z.array(
      z.object({
        id: uuid,
        type: z.string(),
        createdAt: timestamp,
        preparedAt: timestamp.nullable(),
        deliveries: z.array(
          z.object({
            id: z.string(),
            endpointId: uuid,
            url: z.string(),
            state: z.string(),
            attempts: z.number().int(),
            lastStatus: z.number().int().nullable(),
            lastError: z.string().nullable(),
            deliveredAt: timestamp.nullable(),
            nextAttemptAt: timestamp,
          }),
        ),
      }),
    ),
  })
  .meta({ id: "RequestWebhooks" });
const _webhooksShape: (items: WebhookEventLine[]) => z.input<typeof requestWebhooksSchema>["items"] = (items) => items;

const seenVersion = z.string().min(1).max(64).meta({ description: "The version of the request the operator saw (RequestTimeline.version)" });
const why = z.string().trim().min(3, "say why, in a few words").max(500);

export const pageCancelBody = z.strictObject({ seenVersion, reason: why }).meta({ id: "PageCancelBody" });
export const pageCancelResultSchema = z
  .object({ requestId: uuid, cancelled: z.boolean(), alreadyCancelled: z.boolean(), status: z.enum(WORKFLOW_STATUSES), version: z.string() })
  .meta({ id: "PageCancelResult" });

export const rerunBody = z
  .strictObject({
    seenVersion,
    fromStepId: uuid.meta({ description: "The step to rerun from: it and every step after it without a receipt get a new attempt budget" }),
    budget: z.number().int().min(1).max(MAX_RERUN_BUDGET).optional().meta({ description: "Attempts each rearmed step may start; 3 when not given" }),
    reason: why,
  })
  .meta({ id: "RerunBody" });
export const rerunResultSchema = z
  .object({
    requestId: uuid,
    applied: z.boolean().meta({ description: "False when this repeats a rerun already made from the same version" }),
    steps: z.array(z.object({ stepId: uuid, name: z.string(), state: z.enum(STEP_STATES), nextMode: z.enum(ATTEMPT_MODES) })),
    toReview: z.array(uuid).meta({ description: "Steps whose outcome is unknown: each went to a review case, and runs only after a person settles it" }),
    version: z.string(),
  })
  .meta({ id: "RerunResult" });

export const requestPagePaths: ZodOpenApiPathsObject = {
  "/api/requests/{id}/timeline": {
    get: operation({
      id: "getRequestTimeline",
      summary: "A request's whole story: steps, attempts, evidence, receipts, waits, reviews, what the customer sees",
      description:
        "Every attempt of every step under its fencing term, with checkpoints, late observations, fencing rejections, recovery decisions " +
        "(category and reason), receipts (verification method), waits, review cases (owner), the input and each result (bounded), and the " +
        "end-user projection. Times are the database clock's. Weak ETag (of everything but dbNow): send If-None-Match to get a bodiless 304 while nothing changed.",
      tag: "engineer",
      path: requestPageParams,
      query: requestPageQuery,
      ok: { description: "The request", schema: requestTimelineSchema },
      problems: { "404": "No such request" },
    }),
  },
  "/api/requests/{id}/webhooks": {
    get: operation({
      id: "getRequestWebhooks",
      summary: "The webhook events a request produced and their deliveries",
      description: "Read on demand: the outbox is not indexed by request, so this scans it. At most 200 events.",
      tag: "engineer",
      path: requestPageParams,
      ok: { description: "Events, oldest first", schema: requestWebhooksSchema },
      problems: { "404": "No such request" },
    }),
  },
  "/api/requests/{id}/actions/cancel": {
    post: operation({
      id: "cancelRequestAsStaff",
      summary: "Cancel a request (staff), if it is as the operator saw it",
      description: "Audited. Cancelling a cancelled request answers it as it is. A request that changed since seenVersion is refused with what it is now.",
      tag: "engineer",
      path: requestPageParams,
      body: pageCancelBody,
      ok: { description: "Cancelled, or already cancelled", schema: pageCancelResultSchema },
      problems: { "400": "Invalid body", "404": "No such request", "409": "stale-request-view: it changed (current says how); request-ended: it already completed or failed" },
    }),
  },
  "/api/requests/{id}/actions/rerun": {
    post: operation({
      id: "rerunRequestFromStep",
      summary: "Rerun a request that could not be completed, from one of its steps",
      description:
        "That step and every later step without a receipt get a new attempt budget; receipted steps and earlier attempts stay. A step whose " +
        "last attempt's outcome is unknown and whose destination neither takes idempotency keys nor can be queried goes to a review case " +
        "first (toReview). Audited; repeating the same rerun answers it with applied: false.",
      tag: "engineer",
      path: requestPageParams,
      body: rerunBody,
      ok: { description: "Rearmed", schema: rerunResultSchema },
      problems: { "400": "Invalid body", "404": "No such request", "409": "stale-request-view: it changed (current); rerun-refused: why says what is in the way" },
    }),
  },
};
