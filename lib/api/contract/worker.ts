/**
 * The HTTP worker protocol: the coordinator's operations (lib/worker/coordinator.ts) as
 * `POST /api/worker/<operation>`, authorised by a worker bearer token. These schemas are shared
 * by the server (lib/api/worker-protocol.ts) and the client (lib/worker/http-coordinator.ts).
 *
 * On the wire, fencing terms and epochs are decimal strings (they are bigints) and times are
 * ISO 8601 strings. A refused fenced write is a 409 problem with `code: "authority-lost"` and
 * the refusal's fields; the client re-raises it as the engine's own AuthorityLostError.
 * The OpenAPI entries are in worker-paths.ts, so workers do not load zod-openapi.
 *
 * Versions: an operation's request and response never change shape; a change is a new operation
 * (and a new protocol version), and the older operations stay served. Version 1 is the operations
 * up to wait-for-work. Version 2 adds two that save round trips: claim-or-wait (a long poll that
 * returns the work it waited for, instead of a wake-up followed by a claim) and
 * commit-receipts-and-claim (a receipt batch and the claim for the slots it frees, in one
 * exchange). Version 3 adds the steps that wait: park (a timer or event-wait step arms its wait
 * and gives up its lease) and settle-due (a long poll that fires what the database clock made
 * due). A worker that speaks an older version is served as before.
 */
import { z } from "zod";
import { childrenRegistrationSchema } from "@/lib/children/definition";
import { eventRegistrationSchema } from "@/lib/events/definition";
import { MAX_RATE_PER_SECOND } from "@/lib/definitions/adapter";
import { DEFAULT_FAIR_SHARE, FAIRNESS_RULES, MAX_LIMIT_PER_KEY, MAX_PRIORITY, MIN_PRIORITY } from "@/lib/definitions/workflow";
import type { AuthorityLostError } from "@/lib/engine/errors";
import { ATTEMPT_MODES, REJECTION_REASONS, RENEWAL_REFUSAL_REASONS, REPETITION_POLICIES, type VerificationMethod } from "@/lib/engine/vocabulary";

const MAX_BATCH = 500;

export const wireTerm = z.string().regex(/^\d{1,19}$/, "a decimal integer").meta({ description: "A fencing term or epoch (a bigint, as a decimal string)" });
const wireTime = z.iso.datetime({ offset: true });
const id = z.uuid();
const shortText = z.string().max(2_000);
/** Any JSON value: a destination's answer, a step's input. */
const jsonValue = z.unknown();

export const wireLease = z
  .object({ stepId: id, fencingTerm: wireTerm, sessionId: id })
  .meta({ id: "WorkerLease", description: "The lease a worker presents: step, fencing term, its session" });

// ---- sessions -------------------------------------------------------------------------------

const name = z.string().min(1).max(100);
const words = z.string().min(1).max(200);
const adapterRef = z.object({ name, version: z.string().min(1).max(64) });
const wireWorkflowVersion = z.object({ kind: name, version: z.number().int().min(1).max(2_147_483_647) });

/** A workflow version as a worker registers it (lib/definitions/registration.ts). */
export const wireRegisteredWorkflow = z
  .object({
    kind: name,
    version: z.number().int().min(1).max(2_147_483_647),
    inputSchema: z.record(z.string(), jsonValue),
    title: words.nullable(),
    deadlineMs: z.number().int().min(1).nullable(),
    // Absent from workers built before fair share: the defaults.
    fairShare: z
      .object({
        limitPerKey: z.number().int().min(1).max(MAX_LIMIT_PER_KEY).nullable(),
        fairness: z.enum(FAIRNESS_RULES),
        priority: z.number().int().min(MIN_PRIORITY).max(MAX_PRIORITY),
      })
      .default(DEFAULT_FAIR_SHARE),
    steps: z
      .array(
        z.object({
          name: z.string().min(1).max(63),
          class: name,
          attemptBudget: z.number().int().min(1).max(1_000),
          dependsOn: z.array(z.string().max(63)).max(64),
          adapter: z.union([adapterRef, z.object({ field: z.string().min(1).max(100), options: z.record(z.string().max(100), adapterRef) })]).nullable(),
          milestone: z.object({ upcoming: words, current: words, done: words, service: words.optional(), review: words.optional() }),
          /** Absent unless the step waits: its room and what the server keeps of it. */
          wait: z.union([z.object({ room: z.literal("timer") }), eventRegistrationSchema, childrenRegistrationSchema]).optional(),
          /** Absent unless the step declares how its effect is undone (lib/compensation). */
          compensate: z
            .object({
              adapter: adapterRef,
              class: name,
              attemptBudget: z.number().int().min(1).max(1_000),
              milestone: z.object({ current: words, done: words }),
              on: z.enum(["cancel", "failure", "both"]),
            })
            .optional(),
        }),
      )
      .min(1)
      .max(64),
  })
  .meta({ id: "RegisteredWorkflow" });

/** An adapter's contract as a worker registers it. */
export const wireRegisteredAdapter = z
  .object({
    name,
    version: z.string().min(1).max(64),
    idempotencyKeys: z.boolean(),
    statusQuery: z.boolean(),
    fenceEnforcement: z.boolean(),
    repetition: z.enum(REPETITION_POLICIES),
    timeoutMs: z.number().int().min(1).max(86_400_000),
    concurrencyLimit: z.number().int().min(1).max(1_000_000),
    rate: z
      .object({ perSecond: z.number().int().min(1).max(MAX_RATE_PER_SECOND), burst: z.number().int().min(1).max(MAX_RATE_PER_SECOND) })
      .nullable()
      .default(null),
    epochAdminUrl: z.url().max(2_000).nullable(),
    review: z
      .object({ checkUrl: z.string().max(2_000).optional(), instructions: z.string().max(500).optional() })
      .nullable()
      .default(null)
      .meta({ description: "How support can check the destination by hand: a URL with {requestIdentity}, and/or a sentence" }),
  })
  .meta({ id: "RegisteredAdapter" });

export const registerSessionBody = z.object({
  host: z.string().min(1).max(255).optional(),
  pid: z.number().int().min(0).max(2_147_483_647).optional(),
  /** What the session serves: required, since a session claims only what it registered. */
  definitions: z.object({ workflows: z.array(wireRegisteredWorkflow).min(1).max(100), adapters: z.array(wireRegisteredAdapter).max(500) }),
});
export const registerSessionResponse = z.object({ sessionId: id, served: z.array(wireWorkflowVersion) });

export const sessionBody = z.object({ sessionId: id });
export const heartbeatResponse = z.object({ alive: z.boolean() });
export const stopSessionBody = z.object({ sessionId: id, reason: shortText });

// ---- leases ---------------------------------------------------------------------------------

export const claimBody = z.object({
  sessionId: id,
  limit: z.number().int().min(0).max(MAX_BATCH),
});

export const wireClaimedStep = z
  .object({
    stepId: id,
    workflowId: id,
    kind: z.string(),
    workflowVersion: z.number().int(),
    stepName: z.string(),
    attemptId: id,
    fencingTerm: wireTerm,
    epoch: wireTerm,
    mode: z.enum(ATTEMPT_MODES),
    requestIdentity: z.string().nullable(),
    input: jsonValue,
    dependencyResults: z.record(z.string(), jsonValue),
    dependencyReferences: z.record(z.string(), z.string().nullable()).meta({ description: "The external reference in each dependency's receipt, by step name" }),
    inputDigest: z.string(),
    adapter: z.string(),
    adapterVersion: z.string(),
    operation: z.string(),
    stepClass: z.string(),
    attemptsStarted: z.number().int(),
    attemptBudget: z.number().int(),
    leaseTtlMs: z.number().int(),
    renewEveryMs: z.number().int(),
    attemptDeadlineMs: z.number().int(),
    graceMs: z.number().int(),
    deadlineAt: wireTime,
    expiresAt: wireTime,
    checkpointVersion: z.number().int(),
    dbNow: wireTime,
    waits: z
      .object({ count: z.number().int().min(0), firstAt: wireTime.nullable(), lastAt: wireTime.nullable() })
      .meta({ description: "The step's earlier attempts that gave it back to wait, and when the first and the latest began" }),
    /** The W3C traceparent the request was created under; null outside a trace. */
    traceParent: z.string().nullable(),
  })
  .meta({ id: "ClaimedStep" });
export const claimResponse = z.object({ steps: z.array(wireClaimedStep) });

export const renewBody = z.object({
  sessionId: id,
  leases: z.array(z.object({ stepId: id, fencingTerm: wireTerm, checkpointVersion: z.number().int().min(0) })).max(MAX_BATCH),
});
export const wireRenewResult = z.union([
  z.object({ stepId: id, renewed: z.literal(true), expiresAt: wireTime, dbNow: wireTime }),
  z.object({ stepId: id, renewed: z.literal(false), reason: z.enum(RENEWAL_REFUSAL_REASONS) }),
]);
export const renewResponse = z.object({ results: z.array(wireRenewResult) });

export const releaseBody = z.object({
  lease: wireLease,
  reason: shortText,
  delayMs: z.number().min(0).max(86_400_000).optional(),
  effectAbsent: z.boolean().optional(),
});

// ---- checkpoints ----------------------------------------------------------------------------

export const checkpointAckResponse = z.object({ checkpointVersion: z.number().int() });
export const persistRequestIdentityBody = z.object({ lease: wireLease, proposed: z.string().min(1).max(500), adapterVersion: z.string().min(1).max(100) });
export const persistRequestIdentityResponse = z.object({ checkpointVersion: z.number().int(), requestIdentity: z.string() });
export const leaseBody = z.object({ lease: wireLease });
export const observeResponseBody = z.object({ lease: wireLease, externalReference: z.string().max(500).nullable(), result: jsonValue });
export const observeEffectAbsentBody = z.object({ lease: wireLease, answer: jsonValue });
export const reportFailureBody = z.object({ lease: wireLease, reason: shortText });
export const postLateObservationBody = z.object({
  lease: wireLease,
  observation: z.object({ operation: z.string().min(1).max(100), externalReference: z.string().max(500).nullable(), result: jsonValue }),
});

// ---- permits --------------------------------------------------------------------------------

export const acquirePermitBody = z.object({
  lease: wireLease,
  request: z.object({
    adapter: z.string().min(1).max(100),
    operationClass: z.enum(["create", "query"]),
    limit: z.number().int().min(0),
    ttlMs: z.number().min(0).max(86_400_000),
    requestIdentity: z.string().max(500).nullable(),
  }),
});
/**
 * Exactly one is set. permit: granted. refusal: capacity in use (waitMs: when it can free up,
 * null while calls are active). A lease that no longer holds authority is a 409 authority_lost.
 */
export const acquirePermitResponse = z.union([
  // rated: absent from servers built before destination rates (then no call took a call slot).
  z.object({ permit: z.object({ permitId: id, expiresAt: wireTime, rated: z.boolean().default(false) }), refusal: z.null() }),
  // reason: absent from servers built before destination rates (then it was capacity).
  z.object({ permit: z.null(), refusal: z.object({ waitMs: z.number().nullable(), reason: z.enum(["rate", "capacity"]).default("capacity") }) }),
]);
export const releasePermitBody = z.object({ sessionId: id, permitId: id });
export const holdPermitBody = z.object({ sessionId: id, permitId: id, reason: shortText, holdMs: z.number().min(0).max(86_400_000) });

// ---- receipts -------------------------------------------------------------------------------

const verification = z.enum(["direct_response", "idempotent_replay", "status_query"] as const satisfies readonly VerificationMethod[]);
export const wireConclusion = z.union([
  z.object({ kind: z.literal("effect"), externalReference: z.string().max(500).nullable(), result: jsonValue, verification }),
  z.object({ kind: z.literal("no_action_needed"), reason: shortText }),
  z.object({ kind: z.literal("skip"), reason: shortText }),
]);
export const commitReceiptsBody = z.object({
  sessionId: id,
  receipts: z.array(z.object({ stepId: id, fencingTerm: wireTerm, conclusion: wireConclusion })).max(MAX_BATCH),
});

const rejectionReason = z.enum(REJECTION_REASONS);
/** An AuthorityLostError's fields, as carried by a problem and by a refused receipt. */
export const wireAuthorityLost = z
  .object({
    code: z.literal("authority-lost"),
    operation: z.string(),
    stepId: id,
    presentedTerm: wireTerm,
    reason: rejectionReason,
    currentTerm: wireTerm.nullable(),
  })
  .meta({ id: "AuthorityLost" });

export function authorityLostFields(error: AuthorityLostError): z.input<typeof wireAuthorityLost> {
  return {
    code: "authority-lost",
    operation: error.operation,
    stepId: error.stepId,
    presentedTerm: error.presentedTerm.toString(),
    reason: error.reason,
    currentTerm: error.currentTerm === null ? null : error.currentTerm.toString(),
  };
}
export const commitReceiptsResponse = z.object({
  results: z.array(
    z.union([
      z.object({ stepId: id, committed: z.literal(true), receiptId: id }),
      z.object({ stepId: id, committed: z.literal(false), error: wireAuthorityLost }),
    ]),
  ),
});

// ---- recovery and waiting -------------------------------------------------------------------

export const recoverBody = z.object({ sessionId: id, batchSize: z.number().int().min(1).max(1_000) });
export const recoverResponse = z.object({ settled: z.number().int() });
/** The server waits at most this long in one request; the client asks again for longer waits. */
export const MAX_WAIT_MS = 30_000;
export const waitForWorkBody = z.object({ sessionId: id, timeoutMs: z.number().min(0).max(MAX_WAIT_MS) });
export const waitForWorkResponse = z.object({ woken: z.boolean() });

// ---- version 2: fewer round trips -----------------------------------------------------------

export const claimOrWaitBody = z.object({
  sessionId: id,
  limit: z.number().int().min(0).max(MAX_BATCH),
  timeoutMs: z.number().min(0).max(MAX_WAIT_MS),
});
export const commitReceiptsAndClaimBody = z.object({
  sessionId: id,
  receipts: commitReceiptsBody.shape.receipts,
  claimLimit: z.number().int().min(0).max(MAX_BATCH),
});
export const commitReceiptsAndClaimResponse = z.object({ results: commitReceiptsResponse.shape.results, steps: z.array(wireClaimedStep) });

// Plain unions above: zod-openapi 5.4 fails on discriminated unions in this zod version.

/** Engine refusals: a problem's code and the error's fields beside type/title/status/detail (lib/api/http.ts, toProblem). */
export const workerProblemFields = z.discriminatedUnion("code", [
  wireAuthorityLost,
  z.object({ code: z.literal("checkpoint-out-of-order"), operation: z.string(), stepId: z.string() }),
  z.object({ code: z.literal("release-refused"), stepId: z.string(), checkpoint: z.string() }),
  z.object({ code: z.literal("not-found"), what: z.string(), id: z.string() }),
  z.object({ code: z.literal("definition-conflict"), subject: z.string(), differences: z.array(z.string()) }),
  z.object({ code: z.literal("invalid-definition"), problems: z.array(z.string()) }),
  z.object({ code: z.literal("invalid-wait"), detail: z.string() }),
]);

// ---- version 3: steps that wait -------------------------------------------------------------

export const parkBody = z.object({
  lease: wireLease,
  wait: z.object({ room: z.string().min(1).max(50), request: jsonValue }),
  reason: shortText,
});
export const parkResponse = z.object({
  room: z.string(),
  settled: z.boolean(),
  dueAt: wireTime.nullable(),
  detail: z.record(z.string(), jsonValue),
});
export const settleDueBody = z.object({
  sessionId: id,
  limit: z.number().int().min(1).max(10_000),
  timeoutMs: z.number().min(0).max(MAX_WAIT_MS),
});
export const settleDueResponse = z.object({ settled: z.number().int() });

// ---- the operations -------------------------------------------------------------------------

export type Operation = {
  readonly summary: string;
  readonly body: z.ZodType;
  /** null: 204 No Content. */
  readonly response: z.ZodType | null;
};

/** Every operation of the protocol, by its path segment. */
export const workerOperations = {
  "register-session": {
    summary: "Register a worker session (unique per process start) with the workflow versions and adapters it serves",
    body: registerSessionBody,
    response: registerSessionResponse,
  },
  heartbeat: { summary: "Session liveness; alive=false once the session was stopped", body: sessionBody, response: heartbeatResponse },
  "stop-session": { summary: "Stop a session", body: stopSessionBody, response: null },
  claim: { summary: "Claim up to `limit` ready steps of the workflow versions the session registered", body: claimBody, response: claimResponse },
  renew: { summary: "Renew a batch of the session's leases; a refusal is an answer with its reason", body: renewBody, response: renewResponse },
  "persist-request-identity": { summary: "Checkpoint 2: persist the step's request identity", body: persistRequestIdentityBody, response: persistRequestIdentityResponse },
  "begin-invocation": { summary: "Checkpoint 3: the invocation began", body: leaseBody, response: checkpointAckResponse },
  "observe-response": { summary: "Checkpoint 4: the destination's answer", body: observeResponseBody, response: checkpointAckResponse },
  "observe-effect-absent": { summary: "Checkpoint 4: the destination applied nothing", body: observeEffectAbsentBody, response: checkpointAckResponse },
  "acquire-permit": { summary: "Take an adapter permit, or learn how long to wait for capacity; authority_lost when the lease is not held", body: acquirePermitBody, response: acquirePermitResponse },
  "release-permit": { summary: "Return an adapter permit", body: releasePermitBody, response: null },
  "hold-permit": { summary: "Keep a permit counted after a call with an unknown outcome", body: holdPermitBody, response: null },
  "commit-receipts": { summary: "Commit a batch of receipts, each fenced on its own lease", body: commitReceiptsBody, response: commitReceiptsResponse },
  "report-failure": { summary: "Report a failed attempt; recovery decides from evidence", body: reportFailureBody, response: null },
  release: { summary: "Hand back work whose invocation has not begun (or whose effect is known absent)", body: releaseBody, response: null },
  "post-late-observation": { summary: "Post evidence learned after authority was lost", body: postLateObservationBody, response: null },
  recover: { summary: "One bounded recovery pass; returns how many leases and permits it settled", body: recoverBody, response: recoverResponse },
  "wait-for-work": { summary: "Long poll: answers when work may have become ready, or after timeoutMs", body: waitForWorkBody, response: waitForWorkResponse },
  "claim-or-wait": {
    summary: "Version 2. Claim up to `limit` ready steps; when none is ready, wait up to timeoutMs for work and claim once more (a long poll that returns the work)",
    body: claimOrWaitBody,
    response: claimResponse,
  },
  "commit-receipts-and-claim": {
    summary: "Version 2. Commit a batch of receipts, each fenced on its own lease, then claim up to `claimLimit` ready steps, in one exchange",
    body: commitReceiptsAndClaimBody,
    response: commitReceiptsAndClaimResponse,
  },
  park: {
    summary: "Version 3. A wait step (a timer, an event wait) gives up its lease and waits: its wait is armed in its room, in one transaction; authority_lost when the lease is not held",
    body: parkBody,
    response: parkResponse,
  },
  "settle-due": {
    summary: "Version 3. Settle what the database clock made due (timers that fire, waits that time out), up to `limit`; when nothing is due, wait up to timeoutMs for the next due time (a long poll)",
    body: settleDueBody,
    response: settleDueResponse,
  },
} as const satisfies Record<string, Operation>;

export type WorkerOperation = keyof typeof workerOperations;
