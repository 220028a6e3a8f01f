/**
 * Steps for engineers: the filtered list, one step's full technical record (lease terms and their
 * events, attempts, receipts, late observations, recovery decisions, fencing rejections, permits,
 * review cases), and revoking a step's lease.
 */
import { z } from "zod";
import { REPETITION_POLICIES } from "@/lib/engine/vocabulary";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import {
  CHECKPOINTS,
  EFFECT_OBSERVATIONS,
  LEASE_END_REASONS,
  LEASE_EVENT_KINDS,
  PERMIT_STATES,
  RECOVERY_CATEGORIES,
  REVIEW_STATUSES,
  STEP_STATES,
  WORKFLOW_STATUSES,
} from "@/lib/engine/vocabulary";
import { cursorField, limitField, pageSchema } from "../../cursor";
import { booleanFlag, operation, term, timestamp, uuid } from "../common";
import { requestStepSummarySchema } from "./requests";
import { stepWaitSchema, waitingForField, waitSummarySchema } from "./waits";

export const stepCursorKey = z.tuple([z.iso.datetime({ offset: true }), uuid]);

export const listStepsQuery = z
  .strictObject({
    state: z.enum(STEP_STATES).optional(),
    adapter: z.string().trim().min(1).max(100).optional(),
    workflow: uuid.optional().meta({ description: "Only steps of this request" }),
    openReview: booleanFlag.optional().meta({ description: "true: only steps with an open review case; false: only without" }),
    hasRejection: booleanFlag.optional().meta({ description: "true: only steps with at least one fencing rejection" }),
    hasLateObservation: booleanFlag.optional(),
    enteredUnknown: booleanFlag
      .optional()
      .meta({ description: "true: only steps whose lease ended after the invocation began with no response, effect or receipt recorded (in from/to when given)" }),
    duplicateReference: booleanFlag.optional().meta({ description: "true: only steps that saw more than one distinct external reference" }),
    receipt: booleanFlag.optional().meta({ description: "true: only steps with a receipt (written in from/to when given); false: only without" }),
    capability: z
      .enum(["safe", "idempotency_protected", "reconcilable", "prohibited"])
      .optional()
      .meta({ description: "Only steps with a recovery decision whose adapter had this repetition policy (in from/to when given)" }),
    leaseEvent: z.enum(LEASE_EVENT_KINDS).optional().meta({ description: "Only steps with a lease event of this kind (in from/to when given)" }),
    recovery: z.enum(RECOVERY_CATEGORIES).optional().meta({ description: "Only steps with a recovery decision of this category (in from/to when given)" }),
    waitingFor: waitingForField.optional(),
    from: timestamp.optional().meta({ description: "With leaseEvent, recovery or receipt: event at or after" }),
    to: timestamp.optional().meta({ description: "With leaseEvent, recovery or receipt: event before" }),
    cursor: cursorField(stepCursorKey).optional(),
    limit: limitField,
  })
  .meta({ id: "ListStepsQuery" });
export type ListStepsQuery = z.output<typeof listStepsQuery>;

export const currentLeaseSchema = z.object({
  fencingTerm: term,
  epoch: term,
  ownerSessionId: uuid,
  leasedAt: timestamp,
  expiresAt: timestamp,
});

export const stepSummarySchema = z
  .object({
    id: uuid,
    workflowId: uuid,
    workflowKind: z.string(),
    name: z.string(),
    adapter: z.string(),
    operation: z.string(),
    stepClass: z.string(),
    state: z.enum(STEP_STATES),
    stateReason: z.string().nullable(),
    fencingTerm: term,
    attemptsStarted: z.number().int(),
    attemptBudget: z.number().int(),
    updatedAt: timestamp,
    currentLease: currentLeaseSchema.nullable(),
    openReview: z.boolean(),
    fencingRejections: z.number().int(),
    wait: waitSummarySchema.nullable().meta({ description: "What the step waits for while it waits; null otherwise" }),
  })
  .meta({ id: "StepSummary" });
export type StepSummary = z.output<typeof stepSummarySchema>;

export const stepPageSchema = pageSchema(stepSummarySchema).meta({ id: "StepPage" });
export type StepPage = z.output<typeof stepPageSchema>;

export const stepIdParams = z.object({ id: uuid });

const leaseEventSchema = z.object({
  // Written events are numbered; `acquired` and `released` are the attempt's start and end, and
  // are named after it (`acquired:<attempt id>`, `released:<attempt id>`).
  id: z.string(),
  kind: z.enum(LEASE_EVENT_KINDS),
  ownerSessionId: uuid,
  reason: z.string().nullable(),
  expiresAt: timestamp.nullable(),
  at: timestamp,
});

export const fencingRejectionSchema = z
  .object({
    id: z.number().int(),
    operation: z.string(),
    presentedTerm: term,
    presentedEpoch: term,
    presentedOwner: uuid,
    currentTerm: term.nullable(),
    currentEpoch: term,
    reason: z.string(),
    lateObservationId: z.number().int().nullable(),
    at: timestamp,
  })
  .meta({ id: "FencingRejection" });
export type FencingRejectionView = z.output<typeof fencingRejectionSchema>;

export const leaseTermSchema = z
  .object({
    fencingTerm: term,
    epoch: term,
    ownerSessionId: uuid,
    attemptId: uuid,
    policyVersion: z.number().int(),
    leasedAt: timestamp,
    renewedAt: timestamp.nullable(),
    expiresAt: timestamp,
    checkpointVersion: z.number().int(),
    endedAt: timestamp.nullable(),
    endReason: z.enum(LEASE_END_REASONS).nullable(),
    renewals: z.number().int(),
    renewalRefusals: z.number().int(),
    events: z.array(leaseEventSchema),
    /** Writes presented with this term that were refused. */
    rejections: z.array(fencingRejectionSchema),
  })
  .meta({ id: "LeaseTerm", description: "One fencing term of a step: its lease row and its events in order" });
export type LeaseTermView = z.output<typeof leaseTermSchema>;

export const attemptSchema = z
  .object({
    id: uuid,
    fencingTerm: term,
    epoch: term,
    ownerSessionId: uuid,
    mode: z.string(),
    requestIdentity: z.string().nullable(),
    inputDigest: z.string(),
    adapterVersion: z.string().nullable(),
    checkpoint: z.enum(CHECKPOINTS),
    deadlineAt: timestamp,
    createdAt: timestamp,
    invocationBeganAt: timestamp.nullable(),
    responseObservedAt: timestamp.nullable(),
    observedEffect: z.enum(EFFECT_OBSERVATIONS).nullable(),
    externalReference: z.string().nullable(),
    observedResult: z.unknown(),
    outcome: z.string().nullable(),
    outcomeReason: z.string().nullable(),
    endedAt: timestamp.nullable(),
  })
  .meta({ id: "Attempt" });
export type AttemptView = z.output<typeof attemptSchema>;

export const receiptSchema = z
  .object({
    id: uuid,
    attemptId: uuid.nullable(),
    inputDigest: z.string(),
    adapterVersion: z.string().nullable(),
    requestIdentity: z.string().nullable(),
    externalReference: z.string().nullable(),
    observedResult: z.unknown(),
    verificationMethod: z.string(),
    fencingTerm: term,
    epoch: term,
    createdAt: timestamp,
  })
  .meta({ id: "Receipt" });
export type ReceiptView = z.output<typeof receiptSchema>;

export const lateObservationSchema = z
  .object({
    id: z.number().int(),
    attemptId: uuid.nullable(),
    fencingTerm: term,
    epoch: term,
    operation: z.string(),
    requestIdentity: z.string().nullable(),
    externalReference: z.string().nullable(),
    result: z.unknown(),
    at: timestamp,
  })
  .meta({ id: "LateObservation" });
export type LateObservationView = z.output<typeof lateObservationSchema>;

export const recoveryDecisionSchema = z
  .object({
    id: z.number().int(),
    attemptId: uuid,
    fencingTerm: term,
    epoch: term,
    trigger: z.string(),
    category: z.string(),
    evidence: z.unknown(),
    observedExpiresAt: timestamp,
    decidedAt: timestamp,
    decidedBy: z.string(),
  })
  .meta({ id: "RecoveryDecision" });
export type RecoveryDecisionView = z.output<typeof recoveryDecisionSchema>;

export const permitSchema = z
  .object({
    id: uuid,
    adapter: z.string(),
    operationClass: z.string(),
    attemptId: uuid,
    fencingTerm: term,
    requestIdentity: z.string().nullable(),
    state: z.enum(PERMIT_STATES),
    acquiredAt: timestamp,
    expiresAt: timestamp,
    heldUntil: timestamp.nullable(),
    heldReason: z.string().nullable(),
    releasedAt: timestamp.nullable(),
  })
  .meta({ id: "AdapterPermit" });
export type PermitView = z.output<typeof permitSchema>;

export const reviewCaseSchema = z
  .object({
    id: uuid,
    reason: z.string(),
    status: z.enum(REVIEW_STATUSES),
    assignee: z.string().nullable(),
    reviewBy: timestamp,
    openedAt: timestamp,
    resolution: z.string().nullable(),
    resolvedBy: z.string().nullable(),
    resolvedAt: timestamp.nullable(),
    resolutionNote: z.string().nullable(),
    externalReference: z.string().nullable(),
  })
  .meta({ id: "StepReviewCase" });
export type ReviewCaseView = z.output<typeof reviewCaseSchema>;

export const adapterContractSchema = z
  .object({
    idempotencyKeys: z.boolean(),
    statusQuery: z.boolean(),
    fenceEnforcement: z.boolean(),
    repetition: z.enum(REPETITION_POLICIES),
    timeoutMs: z.number().int(),
    concurrencyLimit: z.number().int(),
  })
  .meta({ id: "AdapterContract", description: "What the destination promises, as the adapter registered it" });

export const stepDetailSchema = z
  .object({
    dbNow: timestamp,
    step: z.object({
      id: uuid,
      name: z.string(),
      position: z.number().int(),
      adapter: z.string(),
      adapterVersion: z.string(),
      contract: adapterContractSchema.nullable().meta({ description: "The adapter's registered contract; null when none is registered" }),
      operation: z.string(),
      stepClass: z.string(),
      leaseTtlMs: z.number().int(),
      state: z.enum(STEP_STATES),
      stateReason: z.string().nullable(),
      fencingTerm: term,
      attemptsStarted: z.number().int(),
      attemptBudget: z.number().int(),
      nextMode: z.string(),
      nextEligibleAt: timestamp.nullable().meta({ description: "Null while the step is queued behind its concurrency key's limit" }),
      priority: z.number().int(),
      concurrencyKey: z.string().nullable(),
      requestIdentity: z.string().nullable(),
      inputDigest: z.string(),
      createdAt: timestamp,
      updatedAt: timestamp,
      completedAt: timestamp.nullable(),
    }),
    workflow: z.object({
      id: uuid,
      kind: z.string(),
      version: z.number().int(),
      servedBy: z.number().int().meta({ description: "Live worker sessions that serve kind@version; 0 means no worker serves it" }),
      status: z.enum(WORKFLOW_STATUSES),
      statusReason: z.string().nullable(),
      requester: z.string(),
      createdAt: timestamp,
      deadlineAt: timestamp.nullable(),
      /** The W3C traceparent the request was created under: its trace in the operator's trace UI. Null outside a trace. */
      traceParent: z.string().nullable(),
      steps: z.array(requestStepSummarySchema),
    }),
    undo: z
      .object({
        undoes: z
          .object({ step: z.string(), stepId: uuid, receiptId: uuid, externalReference: z.string().nullable(), decidedBy: z.string() })
          .nullable()
          .meta({ description: "For a step that undoes another: that step, and the receipt of the effect it undoes" }),
        undoneBy: z
          .object({ stepId: uuid, name: z.string(), state: z.enum(STEP_STATES) })
          .nullable()
          .meta({ description: "For a step whose effect is being undone: the step that undoes it" }),
      })
      .meta({ description: "Compensation (docs/adopting/compensation.md)" }),
    leases: z.array(leaseTermSchema),
    attempts: z.array(attemptSchema),
    receipts: z.array(receiptSchema),
    lateObservations: z.array(lateObservationSchema),
    recoveryDecisions: z.array(recoveryDecisionSchema),
    fencingRejections: z.array(fencingRejectionSchema),
    permits: z.array(permitSchema),
    reviewCases: z.array(reviewCaseSchema),
    wait: stepWaitSchema.nullable().meta({ description: "What the step waits or waited for; null for a step that never waited" }),
  })
  .meta({ id: "StepDetail", description: "Everything recorded about one step, each record kept apart; times from the database clock" });
/** Everything recorded about one step, each record kept apart; times from the database clock. */
export type StepDetail = z.output<typeof stepDetailSchema>;

export const revokeBody = z
  .strictObject({ reason: z.string().trim().min(3, "say why, in a few words").max(500) })
  .meta({ id: "RevokeLeaseBody" });

export const revokeResultSchema = z
  .object({
    stepId: uuid,
    revokedTerm: term,
    decision: z.object({ category: z.enum(RECOVERY_CATEGORIES), detail: z.string().nullable() }),
  })
  .meta({ id: "RevokeLeaseResult", description: "The revoked term and what recovery decided from the evidence" });
export type RevokeResult = z.output<typeof revokeResultSchema>;

export const stepsPaths: ZodOpenApiPathsObject = {
  "/api/steps": {
    get: operation({
      id: "listSteps",
      summary: "List steps, most recently changed first",
      description: "Keyset pagination on (updated_at, id) descending.",
      tag: "engineer",
      query: listStepsQuery,
      ok: { description: "A page of steps", schema: stepPageSchema },
      problems: { "400": "Invalid filter or cursor" },
    }),
  },
  "/api/steps/{id}": {
    get: operation({
      id: "getStep",
      summary: "A step's technical record",
      description: "Lease terms with their events in order, attempts, receipts, late observations, recovery decisions, fencing rejections, permits and review cases.",
      tag: "engineer",
      path: stepIdParams,
      ok: { description: "The step", schema: stepDetailSchema },
      problems: { "404": "No such step" },
    }),
  },
  "/api/steps/{id}/revoke": {
    post: operation({
      id: "revokeLease",
      summary: "Revoke the step's current lease",
      description:
        "The holder loses authority at once and the revocation is recorded. What happens to the step is still decided by recovery from the evidence; a revoke does not cancel anything at the destination.",
      tag: "engineer",
      path: stepIdParams,
      body: revokeBody,
      ok: { description: "Revoked; the recovery decision", schema: revokeResultSchema },
      problems: { "400": "Invalid body", "403": "Cross-site request refused", "404": "No such step", "409": "The step holds no open lease" },
    }),
  },
};
