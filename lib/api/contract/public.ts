/**
 * The API of apps and end users: an app creates, reads, lists and cancels its requests with an
 * app API key (`fenceline/client`); an end user follows a request by its tracking token. Nothing
 * an end user reads exposes an engine field: the tracking view is the projection's DTO
 * (lib/projection), and an unknown token is the same 404 as any other not-found.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import type { RequestRecord, RequestWithProgress, RequestWithSteps } from "@/lib/requests/types";
import { MAX_CONCURRENCY_KEY_LENGTH, MAX_PRIORITY, MIN_PRIORITY } from "@/lib/definitions/workflow";
import { STEP_STATES, VERIFICATION_METHODS, WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import type { TrackingView } from "@/lib/projection/types";
import { cursorField, limitField, pageSchema } from "../cursor";
import { HttpProblem } from "../problems";
import { problemResponse } from "./common";

const timestamp = z.iso.datetime({ offset: true });
/** Text PostgreSQL can store and a label can show: no NUL, no other control characters. */
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;

// ---------------------------------------------------------------------------------------------
// Creating a request

export const createRequestBody = z
  .strictObject({
    kind: z.string().min(1).max(100).meta({ description: "A registered workflow kind" }),
    version: z.number().int().min(1).max(2_147_483_647).optional().meta({ description: "A registered version; the kind's highest when absent" }),
    input: z.unknown().meta({ description: "The request's input, checked against the version's input schema" }),
    deadline: timestamp.optional().meta({ description: "Overrides the definition's deadline" }),
    priority: z
      .number()
      .int()
      .min(MIN_PRIORITY)
      .max(MAX_PRIORITY)
      .optional()
      .meta({ description: `${MIN_PRIORITY}–${MAX_PRIORITY}, higher claimed first; the kind's default priority when absent` }),
    concurrencyKey: z
      .string()
      .min(1)
      .max(MAX_CONCURRENCY_KEY_LENGTH)
      .regex(NO_CONTROL_CHARACTERS, "must not contain control characters")
      .optional()
      .meta({
        description:
          "The tenant or customer this request counts against (e.g. a customer id): the kind's limit on steps in flight applies per key, " +
          "and keys take turns. Without one, the request is a key of its own.",
      }),
  })
  .meta({ id: "CreateRequestBody", description: "A request of a registered workflow kind" });

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

export const requestSchema = z
  .object({
    id: z.uuid(),
    kind: z.string(),
    version: z.number().int(),
    status: z.enum(WORKFLOW_STATUSES),
    statusReason: z.string().nullable().meta({ description: "Why it ended, in the engine's words: for engineers, not customers" }),
    trackingToken: z.string().meta({ description: "Unguessable; the only key an end user needs. Keep it private." }),
    trackUrl: z.string().meta({ description: "The end user's page: /track/<trackingToken>" }),
    createdAt: timestamp,
    updatedAt: timestamp,
    deadlineAt: timestamp.nullable(),
    priority: z.number().int().meta({ description: `${MIN_PRIORITY}–${MAX_PRIORITY}, higher claimed first` }),
    concurrencyKey: z.string().nullable().meta({ description: "The tenant or customer it counts against for fair share" }),
  })
  .meta({ id: "Request" });

const _sameRequest: (request: RequestRecord) => z.input<typeof requestSchema> = (request) => request;
void _sameRequest;

export const requestParams = z.object({ id: z.uuid() });

export const cancelRequestBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500).optional().meta({ description: "Recorded with the cancellation" }) })
  .meta({ id: "CancelRequestBody" });

export const appRequestsQuery = z
  .strictObject({
    kind: z.string().trim().min(1).max(100).optional(),
    status: z.enum(WORKFLOW_STATUSES).optional(),
    cursor: cursorField(z.tuple([timestamp, z.uuid()])).optional(),
    limit: limitField,
  })
  .meta({ id: "AppRequestsQuery" });

export const appRequestPageSchema = pageSchema(requestSchema).meta({ id: "AppRequestPage" });

// ---------------------------------------------------------------------------------------------
// Tracking a request

export const TRACKING_HEADLINES = ["preparing", "scheduled", "waiting", "recovering", "needs_review", "completed", "cancelled", "not_completed", "cancelling", "reversing"] as const;

export const trackingViewSchema = z
  .object({
    reference: z.string().meta({ description: "Short reference to quote to support, e.g. FL-0F3A-9C2E" }),
    title: z.string(),
    headline: z.object({
      state: z.enum(TRACKING_HEADLINES),
      label: z.string().meta({ description: "Preparing, Scheduled, Waiting on an external service, Recovering execution, Completed, …" }),
      tone: z.enum(["neutral", "attention", "ok", "stopped"]),
    }),
    happening: z.string().meta({ description: "What is happening now, in plain words" }),
    next: z.string().meta({ description: "What happens next" }),
    reason: z.string().nullable().meta({ description: "Why it stopped, when a person wrote a reason for the customer" }),
    longerThanUsual: z.boolean().meta({ description: "Taking longer than requests of its kind usually do; `next` says what happens" }),
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

export const requestWithProgressSchema = requestSchema
  .extend({ progress: trackingViewSchema.meta({ description: "What the request's end user sees on its tracking page" }) })
  .meta({ id: "RequestWithProgress" });
const _sameRequestWithProgress: (request: RequestWithProgress) => z.input<typeof requestWithProgressSchema> = (request) => request;
void _sameRequestWithProgress;

/** How a request's effects are being undone (lib/compensation). */
export const compensationSchema = z
  .object({
    cause: z.enum(["cancel", "failure"]),
    state: z.enum(["waiting", "undoing", "undone", "in_review"]).meta({
      description: "waiting: a step is still in flight or in review, so what to undo is not known yet; undoing; undone: every undo has its receipt; in_review: an undo needs a person",
    }),
    startedAt: timestamp,
    finishedAt: timestamp.nullable(),
    undos: z.readonly(z.array(
      z.object({
        stepId: z.uuid(),
        name: z.string(),
        undoes: z.string().meta({ description: "The step whose effect this undoes" }),
        undoesStepId: z.uuid(),
        state: z.enum(STEP_STATES),
        stateReason: z.string().nullable(),
        rank: z.number().int().meta({ description: "1 runs first: reverse order of the receipts" }),
        receiptId: z.uuid().meta({ description: "The receipt of the effect being undone" }),
        externalReference: z.string().nullable(),
        decidedBy: z.string().meta({ description: "What showed the effect happened: its receipt, or a person in review" }),
      }),
    )),
    notUndone: z.readonly(z.array(z.object({ step: z.string(), why: z.string(), decidedBy: z.string() }))),
  })
  .meta({ id: "Compensation" });

export const cancelledRequestSchema = requestWithProgressSchema
  .extend({ compensation: compensationSchema.nullable().meta({ description: "What will be undone; null when the workflow undoes nothing on cancel" }) })
  .meta({ id: "CancelledRequest" });
// ---------------------------------------------------------------------------------------------
// A request's evidence: its steps with their receipts and open review cases (scope requests:evidence)

/** What `GET /api/requests/{id}` may add: `include=steps`. */
export const REQUEST_INCLUDES = ["steps"] as const;

export const readRequestQuery = z
  .strictObject({
    include: z
      .enum(REQUEST_INCLUDES)
      .optional()
      .meta({ description: "`steps`: add each step's receipt (verification method, external reference, observed result) and open review cases; needs the requests:evidence scope" }),
  })
  .meta({ id: "ReadRequestQuery" });

const iso = z.string().meta({ description: "ISO 8601, database clock" });

export const stepEvidenceSchema = z
  .object({
    name: z.string().meta({ description: "The step's name in its workflow" }),
    position: z.number().int(),
    status: z
      .enum(["pending", "in_progress", "completed", "completed_without_effect", "needs_review", "failed", "cancelled", "superseded"])
      .meta({ description: "Where the step stands; needs_review: its outcome is unknown until a person settles it" }),
    receipt: z
      .object({
        verificationMethod: z
          .enum(VERIFICATION_METHODS)
          .meta({ description: "How the outcome was established" }),
        externalReference: z.string().nullable().meta({ description: "The destination's own reference (a refund id, a parcel number)" }),
        observedResult: z.unknown().meta({ description: "What the destination answered, or the step computed, as the receipt keeps it" }),
        at: iso,
      })
      .nullable()
      .meta({ description: "The step's receipt once it has one: the evidence of what happened" }),
    openReviewCases: z.array(z.object({ id: z.uuid(), reason: z.string(), openedAt: iso, reviewBy: iso })).readonly(),
  })
  .meta({ id: "StepEvidence", description: "One step with its evidence; nothing about leases, terms or attempts" });

export const requestWithStepsSchema = requestWithProgressSchema
  .extend({ steps: z.array(stepEvidenceSchema).readonly().meta({ description: "In the workflow's order" }) })
  .meta({ id: "RequestWithSteps" });
const _sameRequestWithSteps: (request: RequestWithSteps) => z.input<typeof requestWithStepsSchema> = (request) => request;
void _sameRequestWithSteps;

/** The one not-found answer for tracking: the same for a malformed, unknown or foreign token. */
export const trackingNotFound = () => new HttpProblem("not-found", "no request is tracked at this address");

const appAuth: { description: string; security: { appKey: string[] }[] } = {
  description: "Requires `Authorization: Bearer <app key>`.",
  security: [{ appKey: [] }],
};

export const publicPaths: ZodOpenApiPathsObject = {
  "/api/requests": {
    post: {
      operationId: "createRequest",
      summary: "Create a request",
      description:
        "Creates a request of a registered workflow kind and returns it with its tracking token. Needs an app key with the " +
        "`requests:create` scope (in demo mode anonymous requests are allowed, rate-limited per client). With an " +
        "Idempotency-Key, repeating the call returns the same request (200); reusing the key with a different kind or " +
        "input is refused (422).",
      // An app key, or nothing at all in demo mode.
      security: [{ appKey: [] }, {}],
      tags: ["public"],
      requestParams: {
        header: z.object({
          "idempotency-key": z.string().min(1).max(IDEMPOTENCY_KEY_MAX_LENGTH).optional().meta({ description: "1–200 printable ASCII characters" }),
        }),
      },
      requestBody: { content: { "application/json": { schema: createRequestBody } } },
      responses: {
        "201": { description: "Created", content: { "application/json": { schema: requestSchema } } },
        "200": { description: "The request this Idempotency-Key already created", content: { "application/json": { schema: requestSchema } } },
        "400": problemResponse("Invalid body or Idempotency-Key (a priority outside 1–9, an empty or over-long concurrency key: code invalid-request, with issues)"),
        "401": problemResponse("Missing, unknown or revoked app key"),
        "403": problemResponse("The app key lacks the requests:create scope"),
        "413": problemResponse("Body too large"),
        "415": problemResponse("Body is not JSON"),
        "422": problemResponse("Unknown kind or version (code unknown-kind, with the kinds that exist), input that does not match the schema (code invalid-input, with issues), or an Idempotency-Key reused with a different input (code idempotency-key-reused)"),
        "429": problemResponse("Too many requests from this app key (or, anonymous in demo mode, this client): see Retry-After"),
      },
    },
  },
  "/api/requests/{id}": {
    get: {
      operationId: "getRequest",
      summary: "Read a request: its status and what its end user sees; with include=steps, its steps' evidence",
      description:
        "With `include=steps` (scope requests:evidence besides requests:read), each step comes with its receipt — how the outcome " +
        "was verified, the destination's external reference, the observed result — and its open review cases: what an app shows " +
        "its customer (\"your refund reference is …\"). Never leases, terms or attempts. " +
        appAuth.description,
      security: appAuth.security,
      tags: ["public"],
      requestParams: { path: requestParams, query: readRequestQuery },
      responses: {
        "200": {
          description: "The request (a RequestWithSteps with include=steps)",
          content: { "application/json": { schema: z.union([requestWithStepsSchema, requestWithProgressSchema]) } },
        },
        "400": problemResponse("An include other than steps (code invalid-request)"),
        "401": problemResponse("Missing, unknown or revoked app key"),
        "403": problemResponse("The app key lacks the requests:read scope, or (include=steps) the requests:evidence scope"),
        "404": problemResponse("No request of this app has this id"),
      },
    },
  },
  "/api/requests/{id}/cancel": {
    post: {
      operationId: "cancelRequest",
      summary: "Cancel a request",
      description:
        "Steps that are running see the cancel at their next checkpoint. For a workflow that undoes on cancel, `compensation` says what will be undone; the request reads `cancelling` until every undo has its receipt. Cancelling a request that is no longer active (already cancelled, completed, failed) is a 409. " +
        appAuth.description,
      security: appAuth.security,
      tags: ["public"],
      requestParams: { path: requestParams },
      requestBody: { content: { "application/json": { schema: cancelRequestBody } } },
      responses: {
        "200": { description: "The request, cancelled (or cancelling while its effects are undone)", content: { "application/json": { schema: cancelledRequestSchema } } },
        "401": problemResponse("Missing, unknown or revoked app key"),
        "403": problemResponse("The app key lacks the requests:create scope"),
        "404": problemResponse("No request of this app has this id"),
        "409": problemResponse("The request is no longer active: completed, failed, or already cancelled (code request-ended)"),
      },
    },
  },
  "/api/track/{token}": {
    get: {
      operationId: "trackRequest",
      summary: "Follow a request by its tracking token",
      description:
        "The end user's view: a headline, what is happening and what happens next, and milestones. Poll until `terminal`. " +
        "Every answer has an ETag; send it back as If-None-Match and an unchanged view is a bodiless 304. Readable across " +
        "origins listed in FENCELINE_TRACK_ORIGINS (CORS, no credentials; preflight by OPTIONS).",
      tags: ["public"],
      requestParams: {
        path: trackParams,
        header: z.object({ "if-none-match": z.string().optional().meta({ description: "The ETag of the view the client holds" }) }),
      },
      responses: {
        "200": { description: "The request as its end user sees it", content: { "application/json": { schema: trackingViewSchema } } },
        "304": { description: "The view is the one whose ETag was sent" },
        "404": problemResponse("No request is tracked at this token"),
      },
    },
  },
};
