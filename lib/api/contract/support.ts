/**
 * The support API: the review queue of steps whose external outcome is unknown, one case with
 * its evidence, and the three resolutions. Each resolution carries the case version the person
 * saw; a stale one is a 409 that says who resolved the case and when.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { EFFECT_OBSERVATIONS, REVIEW_RESOLUTIONS, REVIEW_STATUSES, WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import { cursorField, limitField, pageSchema } from "../cursor";
import { booleanFlag, problemResponse, staffResponses } from "./common";
import { trackingViewSchema } from "./public";

const timestamp = z.iso.datetime({ offset: true });
const uuid = z.uuid();


// ---------------------------------------------------------------------------------------------
// The queue

/** Keyset position in the queue: review_by (microseconds, as the database wrote it) and case id. */
export const reviewCursorKey = z.tuple([z.iso.datetime({ offset: true }), uuid]);

export const reviewQueueQuery = z
  .strictObject({
    status: z.enum(REVIEW_STATUSES).default("open"),
    adapter: z.string().trim().min(1).max(100).optional().meta({ description: "Only cases of steps on this destination" }),
    q: z.string().trim().min(1).max(200).optional().meta({ description: "Text in the case's reason, or a customer reference (FL-XXXX-XXXX)" }),
    holder: z.enum(["mine", "unassigned"]).optional().meta({ description: "Only the cases you hold, or only those nobody holds" }),
    overdue: booleanFlag.optional().meta({ description: "Only open cases past their review-by time" }),
    cursor: cursorField(reviewCursorKey).optional(),
    limit: limitField,
  })
  .meta({ id: "ReviewQueueQuery" });
export type ReviewQueueQuery = z.output<typeof reviewQueueQuery>;

export const reviewCaseSummarySchema = z
  .object({
    id: uuid,
    status: z.enum(REVIEW_STATUSES),
    version: z.number().int(),
    reason: z.string(),
    openedAt: timestamp,
    reviewBy: timestamp,
    overdue: z.boolean().meta({ description: "Open past its review-by time" }),
    assignee: z.string().nullable().meta({ description: "Who holds the case (a staff member's email), or null" }),
    assignedAt: timestamp.nullable().meta({ description: "Since when the holder has held it" }),
    workflowId: uuid,
    reference: z.string().meta({ description: "The customer's reference" }),
    stepId: uuid,
    stepName: z.string(),
    adapter: z.string(),
    operation: z.string(),
    attemptCount: z.number().int(),
    lateObservationCount: z.number().int(),
    statusQuery: z.boolean().meta({ description: "The destination can be asked what happened" }),
    idempotencyKeys: z.boolean().meta({ description: "The destination deduplicates repeated requests" }),
    resolution: z.enum(REVIEW_RESOLUTIONS).nullable(),
    resolvedBy: z.string().nullable(),
    resolvedAt: timestamp.nullable(),
    undoes: z
      .object({
        step: z.string(),
        stepId: uuid,
        receiptId: uuid.meta({ description: "The receipt of the effect being undone" }),
        externalReference: z.string().nullable(),
        decidedBy: z.string().meta({ description: "What showed the effect happened: its receipt, or a person in review" }),
      })
      .nullable()
      .meta({ description: "For a case on a step that undoes another (a refund, say): what it undoes and that effect's receipt" }),
  })
  .meta({ id: "ReviewCaseSummary" });
export type ReviewCaseSummary = z.output<typeof reviewCaseSummarySchema>;

export const reviewPageSchema = pageSchema(reviewCaseSummarySchema).meta({ id: "ReviewPage" });

// ---------------------------------------------------------------------------------------------
// One case and its evidence

export const reviewCaseParams = z.object({ caseId: uuid });

const capabilitySchema = z.object({
  key: z.enum(["idempotencyKeys", "statusQuery", "fenceEnforcement", "repetition"]),
  available: z.boolean(),
  text: z.string(),
});

export const reviewCaseDetailSchema = z
  .object({
    case: reviewCaseSummarySchema.extend({
      resolutionNote: z.string().nullable(),
      externalReference: z.string().nullable(),
      evidence: z.record(z.string(), z.unknown()).meta({ description: "What recovery recorded when it opened the case" }),
    }),
    request: z.object({ id: uuid, reference: z.string(), kind: z.string(), status: z.enum(WORKFLOW_STATUSES), requester: z.string(), createdAt: timestamp }),
    step: z.object({
      id: uuid,
      name: z.string(),
      adapter: z.string(),
      operation: z.string(),
      state: z.string(),
      sent: z.unknown().meta({ description: "The step's input payload: what was sent" }),
      requestIdentity: z.string().nullable(),
      attemptsStarted: z.number().int(),
      attemptBudget: z.number().int(),
    }),
    attempts: z.array(
      z.object({
        id: uuid,
        number: z.number().int(),
        startedAt: timestamp,
        endedAt: timestamp.nullable(),
        mode: z.string(),
        checkpoint: z.string(),
        outcome: z.string().nullable(),
        observedEffect: z.enum(EFFECT_OBSERVATIONS).nullable(),
        externalReference: z.string().nullable(),
        summary: z.string().meta({ description: "The attempt in plain words" }),
      }),
    ),
    lateObservations: z.array(
      z.object({ id: z.string(), at: timestamp, operation: z.string(), externalReference: z.string().nullable(), result: z.unknown(), summary: z.string() }),
    ),
    receipt: z
      .object({ id: uuid, verificationMethod: z.string(), externalReference: z.string().nullable(), createdAt: timestamp })
      .nullable(),
    sameReference: z.array(
      z.object({ stepId: uuid, workflowId: uuid, reference: z.string(), stepName: z.string(), state: z.string(), externalReference: z.string() }),
    ),
    destination: z.object({
      name: z.string(),
      version: z.string(),
      capabilities: z.array(capabilitySchema),
      safeToRetry: z.boolean(),
      howToCheck: z
        .object({
          url: z.string().nullable().meta({ description: "The destination's page for this request (its adapter's template, with the request identity)" }),
          instructions: z.string().nullable().meta({ description: "What to do, in the adapter's words" }),
        })
        .nullable()
        .meta({ description: "How support can check the destination by hand, when its adapter says" }),
    }),
    customerSees: trackingViewSchema.nullable(),
  })
  .meta({ id: "ReviewCaseDetail" });
export type ReviewCaseDetail = z.input<typeof reviewCaseDetailSchema>;

// ---------------------------------------------------------------------------------------------
// Resolutions

const note = z.string().trim().max(2_000, "must be at most 2000 characters");
const requiredNote = note.min(1, "say why: it is recorded on the case");

const resolutionOptions = [
  z
    .strictObject({
      resolution: z.literal("confirm_delivered"),
      version: z.number().int().positive(),
      externalReference: z
        .string()
        .trim()
        .max(200)
        .optional()
        .transform((reference) => (reference === "" ? undefined : reference))
        .meta({ description: "The destination's reference for the effect; without one, the note must say how delivery was confirmed" }),
      note: note.default(""),
    })
    .superRefine((body, context) => {
      if (body.externalReference === undefined && body.note === "") {
        context.addIssue({ code: "custom", path: ["note"], message: "without an external reference, say how you confirmed delivery: it is recorded in the receipt" });
      }
    }),
  z.strictObject({
    resolution: z.literal("confirm_not_delivered"),
    version: z.number().int().positive(),
    note: requiredNote,
  }),
  z.strictObject({
    resolution: z.literal("abandon"),
    version: z.number().int().positive(),
    customerReason: z.string().trim().min(1, "the customer will see this reason").max(500),
    note: requiredNote,
  }),
] as const;

/** Parsed as a discriminated union, so a refusal names the missing field of the chosen resolution. */
export const resolutionBody = z.discriminatedUnion("resolution", [...resolutionOptions]);

/**
 * The same body for the OpenAPI document. zod 4.6 renders a discriminated union as `oneOf`, which
 * zod-openapi 5.4's discriminator pass does not expect (it crashes); a plain union renders the same.
 */
const resolutionBodyDocument = z.union([...resolutionOptions]).meta({ id: "ResolutionBody", unionOneOf: true } as { id: string });
export type ResolutionBody = z.output<typeof resolutionBody>;

export const resolutionResultSchema = z
  .object({
    caseId: uuid,
    resolution: z.enum(REVIEW_RESOLUTIONS),
    resolvedBy: z.string(),
    resolvedAt: timestamp,
    version: z.number().int(),
    replayed: z.boolean().meta({ description: "True when this exact resolution had already been applied: nothing changed" }),
  })
  .meta({ id: "ResolutionResult" });
export type ResolutionResult = z.input<typeof resolutionResultSchema>;

// ---------------------------------------------------------------------------------------------
// Ownership: take a case, hand it to a colleague, give it back

const ownershipOptions = [
  z.strictObject({ action: z.literal("take"), version: z.number().int().positive() }),
  z.strictObject({
    action: z.literal("hand_over"),
    version: z.number().int().positive(),
    to: z.email("the colleague's email address").max(320).meta({ description: "A staff member with the support role" }),
  }),
  z.strictObject({ action: z.literal("give_back"), version: z.number().int().positive() }),
] as const;

/** Who should hold a case next; `version` is the case version the person saw. */
export const ownershipBody = z.discriminatedUnion("action", [...ownershipOptions]);
// As for resolutions: a plain union renders the same and does not crash zod-openapi.
const ownershipBodyDocument = z.union([...ownershipOptions]).meta({ id: "OwnershipBody", unionOneOf: true } as { id: string });
export type OwnershipBody = z.output<typeof ownershipBody>;

export const ownershipResultSchema = z
  .object({
    caseId: uuid,
    assignee: z.string().nullable(),
    assignedAt: timestamp.nullable(),
    version: z.number().int(),
    replayed: z.boolean().meta({ description: "True when the case was already held that way: nothing changed" }),
  })
  .meta({ id: "OwnershipResult" });
export type OwnershipResult = z.input<typeof ownershipResultSchema>;

const ok = (description: string, schema: z.ZodType) => ({ description, content: { "application/json": { schema } } });

export const supportPaths: ZodOpenApiPathsObject = {
  "/api/review": {
    get: {
      operationId: "listReviewCases",
      summary: "The review queue, overdue first",
      description: "Cases ordered by (review_by, id) ascending, so overdue cases come first; pass nextCursor back as cursor.",
      tags: ["support"],
      requestParams: { query: reviewQueueQuery },
      responses: { ...staffResponses, "200": ok("A page of review cases", reviewPageSchema), "400": problemResponse("Invalid filter or cursor") },
    },
  },
  "/api/review/{caseId}": {
    get: {
      operationId: "getReviewCase",
      summary: "One review case with its evidence",
      tags: ["support"],
      requestParams: { path: reviewCaseParams },
      responses: { ...staffResponses, "200": ok("The case, its evidence and what the customer sees", reviewCaseDetailSchema), "404": problemResponse("No such case") },
    },
  },
  "/api/review/{caseId}/resolution": {
    post: {
      operationId: "resolveReviewCase",
      summary: "Resolve a review case",
      description:
        "confirm_delivered writes a receipt (manual review) and completes the step; confirm_not_delivered makes the step ready " +
        "for a retry with the same request identity; abandon ends the step and the request with a reason the customer sees. " +
        "`version` is the case version you saw. Repeating the same resolution changes nothing (replayed: true).",
      tags: ["support"],
      requestParams: {
        path: reviewCaseParams,
      },
      requestBody: { content: { "application/json": { schema: resolutionBodyDocument } } },
      responses: { ...staffResponses,
        "200": ok("Resolved (or already resolved the same way)", resolutionResultSchema),
        "400": problemResponse("Invalid body"),
        "404": problemResponse("No such case"),
        "409": problemResponse("Stale version or already resolved: carries resolvedBy and resolvedAt when resolved"),
      },
    },
  },
  "/api/review/{caseId}/ownership": {
    post: {
      operationId: "changeReviewCaseOwnership",
      summary: "Take a review case, hand it to a colleague, or give it back",
      description:
        "take makes you the holder; hand_over makes a support colleague the holder; give_back (only by the holder) leaves the " +
        "case unassigned. `version` is the case version you saw; a stale one is refused with who holds the case and since when. " +
        "Asking for what is already so changes nothing (replayed: true).",
      tags: ["support"],
      requestParams: { path: reviewCaseParams },
      requestBody: { content: { "application/json": { schema: ownershipBodyDocument } } },
      responses: { ...staffResponses,
        "200": ok("The case's holder now", ownershipResultSchema),
        "400": problemResponse("Invalid body"),
        "404": problemResponse("No such case"),
        "409": problemResponse("Stale version, held by someone else, or already resolved: carries assignee and assignedAt when held"),
        "422": problemResponse("The colleague is not a support account"),
      },
    },
  },
};
