/**
 * The engineer's API: requests and steps with their full technical record, metrics in two
 * families (lease churn, outcome uncertainty), worker sessions, and the demo fault lab. The
 * route handlers validate with these schemas and the OpenAPI document is generated from them.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { faultSettingsSchema } from "@/lib/demo/destination/faults";
import { cursorField, limitField, pageSchema } from "../cursor";
import { LAB_ACTIONS, LEASE_EVENT_KINDS, RECOVERY_CATEGORIES, STEP_STATES, WORKFLOW_STATUSES } from "@/lib/steps/vocabulary";
import { problemResponse, staffResponses } from "./common";
import { publicPaths } from "./public";

const timestamp = z.iso.datetime({ offset: true });
const uuid = z.uuid();
const term = z.number().int().nonnegative();
const booleanFlag = z.enum(["true", "false"]).transform((value) => value === "true");

export { LEASE_EVENT_KINDS, RECOVERY_CATEGORIES, STEP_STATES, WORKFLOW_STATUSES } from "@/lib/steps/vocabulary";

// ---------------------------------------------------------------------------------------------
// Requests (workflows)

/** Keyset position of a request: its creation time (microseconds, as the database wrote it) and id. */
export const requestCursorKey = z.tuple([z.iso.datetime({ offset: true }), uuid]);

export const listRequestsQuery = z
  .strictObject({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    kind: z.string().trim().min(1).max(100).optional(),
    createdFrom: timestamp.optional().meta({ description: "Created at or after (inclusive)" }),
    createdTo: timestamp.optional().meta({ description: "Created before (exclusive)" }),
    q: z.string().trim().min(1).max(100).optional().meta({ description: "Prefix of the request id or of its tracking token" }),
    cursor: cursorField(requestCursorKey).optional(),
    limit: limitField,
  })
  .meta({ id: "ListRequestsQuery" });
export type ListRequestsQuery = z.output<typeof listRequestsQuery>;

export const requestStepSummarySchema = z.object({
  id: uuid,
  name: z.string(),
  adapter: z.string(),
  state: z.enum(STEP_STATES),
  fencingTerm: term,
});

export const requestSummarySchema = z
  .object({
    id: uuid,
    kind: z.string(),
    status: z.enum(WORKFLOW_STATUSES),
    statusReason: z.string().nullable(),
    requester: z.string(),
    trackingToken: z.string(),
    createdAt: timestamp,
    updatedAt: timestamp,
    deadlineAt: timestamp.nullable(),
    stepsRemaining: z.number().int(),
    openReviews: z.number().int(),
    steps: z.array(requestStepSummarySchema),
  })
  .meta({ id: "RequestSummary" });
export type RequestSummary = z.output<typeof requestSummarySchema>;

export const requestPageSchema = pageSchema(requestSummarySchema).meta({ id: "RequestPage" });
export type RequestPage = z.output<typeof requestPageSchema>;

// ---------------------------------------------------------------------------------------------
// Steps

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
    capability: z
      .enum(["safe", "idempotency_protected", "reconcilable", "prohibited"])
      .optional()
      .meta({ description: "Only steps with a recovery decision whose adapter had this repetition policy (in from/to when given)" }),
    leaseEvent: z.enum(LEASE_EVENT_KINDS).optional().meta({ description: "Only steps with a lease event of this kind (in from/to when given)" }),
    recovery: z.enum(RECOVERY_CATEGORIES).optional().meta({ description: "Only steps with a recovery decision of this category (in from/to when given)" }),
    from: timestamp.optional().meta({ description: "With leaseEvent or recovery: event at or after" }),
    to: timestamp.optional().meta({ description: "With leaseEvent or recovery: event before" }),
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
  })
  .meta({ id: "StepSummary" });
export type StepSummary = z.output<typeof stepSummarySchema>;

export const stepPageSchema = pageSchema(stepSummarySchema).meta({ id: "StepPage" });
export type StepPage = z.output<typeof stepPageSchema>;

export const stepIdParams = z.object({ id: uuid });

const leaseEventSchema = z.object({
  id: z.number().int(),
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
    endReason: z.enum(["receipt", "released", "expired", "revoked", "failed"]).nullable(),
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
    checkpoint: z.enum(["created", "identity_persisted", "invocation_began", "response_observed", "receipt_committed"]),
    deadlineAt: timestamp,
    createdAt: timestamp,
    invocationBeganAt: timestamp.nullable(),
    responseObservedAt: timestamp.nullable(),
    observedEffect: z.enum(["present", "absent"]).nullable(),
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
    state: z.enum(["active", "held", "released"]),
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
    status: z.enum(["open", "resolved"]),
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

export const stepDetailSchema = z
  .object({
    dbNow: timestamp,
    step: z.object({
      id: uuid,
      name: z.string(),
      position: z.number().int(),
      adapter: z.string(),
      operation: z.string(),
      stepClass: z.string(),
      leaseTtlMs: z.number().int(),
      state: z.enum(STEP_STATES),
      stateReason: z.string().nullable(),
      fencingTerm: term,
      attemptsStarted: z.number().int(),
      attemptBudget: z.number().int(),
      nextMode: z.string(),
      nextEligibleAt: timestamp,
      requestIdentity: z.string().nullable(),
      inputDigest: z.string(),
      createdAt: timestamp,
      updatedAt: timestamp,
      completedAt: timestamp.nullable(),
    }),
    workflow: z.object({
      id: uuid,
      kind: z.string(),
      status: z.enum(WORKFLOW_STATUSES),
      statusReason: z.string().nullable(),
      requester: z.string(),
      createdAt: timestamp,
      deadlineAt: timestamp.nullable(),
      steps: z.array(requestStepSummarySchema),
    }),
    leases: z.array(leaseTermSchema),
    attempts: z.array(attemptSchema),
    receipts: z.array(receiptSchema),
    lateObservations: z.array(lateObservationSchema),
    recoveryDecisions: z.array(recoveryDecisionSchema),
    fencingRejections: z.array(fencingRejectionSchema),
    permits: z.array(permitSchema),
    reviewCases: z.array(reviewCaseSchema),
  })
  .meta({ id: "StepDetail", description: "Everything recorded about one step, each record kept apart; times from the database clock" });
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

// ---------------------------------------------------------------------------------------------
// Metrics

export const METRIC_BUCKETS = { "1m": 60, "5m": 300, "15m": 900, "1h": 3600, "1d": 86_400 } as const;
export type MetricBucket = keyof typeof METRIC_BUCKETS;
/** At most this many buckets per series: a range too long for its bucket is refused. */
export const MAX_METRIC_BUCKETS = 1_440;
/** The widest range one request may read. */
export const MAX_METRIC_RANGE_DAYS = 31;

export const metricsQuery = z
  .strictObject({
    from: timestamp.optional().meta({ description: "Range start (default: one hour before `to`)" }),
    to: timestamp.optional().meta({ description: "Range end (default: now)" }),
    bucket: z.enum(Object.keys(METRIC_BUCKETS) as [MetricBucket, ...MetricBucket[]]).default("1m"),
  })
  .meta({ id: "MetricsQuery" });
export type MetricsQuery = z.output<typeof metricsQuery>;

export const metricSeriesSchema = z
  .object({
    id: z.string(),
    family: z.enum(["churn", "uncertainty"]),
    title: z.string(),
    unit: z.string(),
    definition: z.string(),
    /** The filtered list behind this metric, for drilling down. */
    listHref: z.string().nullable(),
    /** Per series key, the filtered list behind that series, where one exists. */
    keyHrefs: z.record(z.string(), z.string()),
    keys: z.array(z.string()),
    points: z.array(z.object({ at: timestamp, values: z.record(z.string(), z.number().nullable()) })),
    /** One figure per key over the whole range (a sum, or for durations the value over all events). */
    total: z.record(z.string(), z.number().nullable()),
  })
  .meta({ id: "MetricSeries" });
export type MetricSeries = z.output<typeof metricSeriesSchema>;

export const metricsSchema = z
  .object({
    from: timestamp,
    to: timestamp,
    bucket: z.string(),
    bucketSeconds: z.number().int(),
    churn: z.array(metricSeriesSchema),
    uncertainty: z.array(metricSeriesSchema),
  })
  .meta({ id: "Metrics", description: "Time-bucketed series in two families that are never summed together" });
export type Metrics = z.output<typeof metricsSchema>;

// ---------------------------------------------------------------------------------------------
// Workers and the fault lab

export const workerSessionSchema = z
  .object({
    id: uuid,
    host: z.string(),
    pid: z.number().int(),
    transport: z.string(),
    startedAt: timestamp,
    lastHeartbeatAt: timestamp,
    heartbeatAgeMs: z.number().int(),
    stoppedAt: timestamp.nullable(),
    stopReason: z.string().nullable(),
    /** Same host as this web process: only then can the fault lab signal it. */
    onThisHost: z.boolean(),
    leases: z.array(z.object({ stepId: uuid, stepName: z.string(), fencingTerm: term, expiresAt: timestamp, expired: z.boolean() })),
  })
  .meta({ id: "WorkerSession", description: "Liveness only: never evidence of what an external system did" });
export type WorkerSessionView = z.output<typeof workerSessionSchema>;

export const workersSchema = z
  .object({ dbNow: timestamp, host: z.string(), lab: z.boolean(), sessions: z.array(workerSessionSchema) })
  .meta({ id: "Workers" });
export type Workers = z.output<typeof workersSchema>;

export { LAB_ACTIONS };
export type LabAction = (typeof LAB_ACTIONS)[number];
export const labWorkerParams = z.object({ sessionId: uuid, action: z.enum(LAB_ACTIONS) });

export const labSignalResultSchema = z
  .object({ sessionId: uuid, pid: z.number().int(), action: z.enum(LAB_ACTIONS), signal: z.string() })
  .meta({ id: "LabSignalResult" });

export const labFaultsSchema = z
  .object({ destinationUrl: z.string(), settings: faultSettingsSchema })
  .meta({ id: "LabFaults", description: "The synthetic destination's fault settings" });
export type LabFaults = z.output<typeof labFaultsSchema>;

// ---------------------------------------------------------------------------------------------
// OpenAPI

const jsonBody = (schema: z.ZodType) => ({ content: { "application/json": { schema } } });
const ok = (description: string, schema: z.ZodType) => ({ description, ...jsonBody(schema) });
const notDemo = problemResponse("Not in demo mode: the fault lab does not exist");

export const engineerPaths: ZodOpenApiPathsObject = {
  // POST /api/requests belongs to the public contract; openapi.ts spreads this object after it,
  // so the path's other operations are carried over here rather than replaced.
  "/api/requests": {
    ...publicPaths["/api/requests"],
    get: {
      operationId: "listRequests",
      summary: "List requests, newest first",
      description: "Keyset pagination on (created_at, id) descending; pass nextCursor back as cursor.",
      tags: ["engineer"],
      requestParams: { query: listRequestsQuery },
      responses: { ...staffResponses, "200": ok("A page of requests", requestPageSchema), "400": problemResponse("Invalid filter or cursor") },
    },
  },
  "/api/steps": {
    get: {
      operationId: "listSteps",
      summary: "List steps, most recently changed first",
      description: "Keyset pagination on (updated_at, id) descending.",
      tags: ["engineer"],
      requestParams: { query: listStepsQuery },
      responses: { ...staffResponses, "200": ok("A page of steps", stepPageSchema), "400": problemResponse("Invalid filter or cursor") },
    },
  },
  "/api/steps/{id}": {
    get: {
      operationId: "getStep",
      summary: "A step's technical record",
      description: "Lease terms with their events in order, attempts, receipts, late observations, recovery decisions, fencing rejections, permits and review cases.",
      tags: ["engineer"],
      requestParams: { path: stepIdParams },
      responses: { ...staffResponses, "200": ok("The step", stepDetailSchema), "404": problemResponse("No such step") },
    },
  },
  "/api/steps/{id}/revoke": {
    post: {
      operationId: "revokeLease",
      summary: "Revoke the step's current lease",
      description:
        "The holder loses authority at once and the revocation is recorded. What happens to the step is still decided by recovery from the evidence; a revoke does not cancel anything at the destination.",
      tags: ["engineer"],
      requestParams: { path: stepIdParams },
      requestBody: jsonBody(revokeBody),
      responses: { ...staffResponses,
        "200": ok("Revoked; the recovery decision", revokeResultSchema),
        "400": problemResponse("Invalid body"),
        "403": problemResponse("Cross-site request refused"),
        "404": problemResponse("No such step"),
        "409": problemResponse("The step holds no open lease"),
      },
    },
  },
  "/api/metrics": {
    get: {
      operationId: "getMetrics",
      summary: "Lease churn and outcome uncertainty, as time series",
      tags: ["engineer"],
      requestParams: { query: metricsQuery },
      responses: { ...staffResponses, "200": ok("Both families", metricsSchema), "400": problemResponse("Invalid or unbounded range") },
    },
  },
  "/api/metrics/prometheus": {
    get: {
      operationId: "getPrometheusMetrics",
      summary: "Both families in Prometheus text exposition format 0.0.4",
      tags: ["engineer"],
      responses: { ...staffResponses, "200": { description: "Exposition text", content: { "text/plain; version=0.0.4": { schema: z.string() } } } },
    },
  },
  "/api/workers": {
    get: {
      operationId: "listWorkers",
      summary: "Worker sessions, heartbeats and the leases they hold now",
      tags: ["engineer"],
      responses: { ...staffResponses, "200": ok("Sessions, live first", workersSchema) },
    },
  },
  "/api/lab/faults": {
    get: {
      operationId: "getLabFaults",
      summary: "The synthetic destination's faults (demo mode only)",
      tags: ["lab"],
      responses: { ...staffResponses, "200": ok("Current settings", labFaultsSchema), "404": notDemo, "502": problemResponse("The destination did not answer") },
    },
    put: {
      operationId: "putLabFaults",
      summary: "Replace the synthetic destination's faults (demo mode only)",
      tags: ["lab"],
      requestBody: jsonBody(faultSettingsSchema),
      responses: { ...staffResponses,
        "200": ok("The settings now in force", labFaultsSchema),
        "400": problemResponse("Invalid settings"),
        "403": problemResponse("Cross-site request refused"),
        "404": notDemo,
        "502": problemResponse("The destination did not answer"),
      },
    },
  },
  "/api/lab/workers/{sessionId}/{action}": {
    post: {
      operationId: "signalWorker",
      summary: "Pause (SIGSTOP), resume (SIGCONT) or kill (SIGKILL) a worker process (demo mode only)",
      description: "Only a live session (not stopped) whose host is this machine and whose process is a Fenceline worker.",
      tags: ["lab"],
      requestParams: { path: labWorkerParams },
      responses: { ...staffResponses,
        "200": ok("Signal sent", labSignalResultSchema),
        "403": problemResponse("Cross-site request refused"),
        "404": problemResponse("Not in demo mode, or no such session"),
        "409": problemResponse("The session is stopped, on another host, or its process is not a worker"),
      },
    },
  },
};
