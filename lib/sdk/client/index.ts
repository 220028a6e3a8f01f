/**
 * `fenceline/client`: your backend starts and reads requests, sends them events, and manages its schedules, with an app key.
 *
 * It imports no worker, engine or database code: it needs only `fetch`. Types of your workflows
 * arrive by `import type` of their definitions.
 *
 * @packageDocumentation
 * @module fenceline/client
 */
export { createClient } from "@/lib/client/client";
export type {
  AnyWorkflow,
  CancelledRequest,
  ClientOptions,
  CreatedRequest,
  CreateOptions,
  FencelineClient,
  GetOptions,
  InputOf,
  KindOf,
  ListOptions,
  RequestDetail,
  RequestList,
  RequestWithEvidence,
  ScheduleList,
  ScheduleRecord,
  SendEventOptions,
  WaitOptions,
  WorkflowSet,
  WorkflowsOf,
} from "@/lib/client/client";
export type { ScheduleOptions } from "@/lib/definitions/schedule";
export type { ScheduleFiringView, ScheduleView } from "@/lib/schedules/types";
export type { ScheduleSpec } from "@/lib/schedules/definition";
export type { Consumer, SentEvent } from "@/lib/events/types";
export {
  ConflictError,
  FencelineApiError,
  FencelineConnectionError,
  InvalidInputError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnknownKindError,
  WaitTimedOutError,
} from "@/lib/client/errors";
export type { FieldIssue } from "@/lib/client/errors";
export type { EvidenceVerification, ReceiptEvidence, RequestRecord, RequestStatus, RequestWithProgress, RequestWithSteps, ReviewCaseEvidence, StepEvidence, StepEvidenceStatus } from "@/lib/requests/types";
export type { Milestone as ProgressMilestone, TrackingView } from "@/lib/projection/types";
export { verifyWebhook, WebhookVerificationError } from "@/lib/client/webhooks";
export type { VerifiedWebhook, VerifyWebhookOptions } from "@/lib/client/webhooks";
export type { ReviewOutcome, WebhookBody, WebhookEventType, WebhookUndo } from "@/lib/webhooks/events";
export type { CompensationState, CompensationView, UndoView } from "@/lib/compensation/types";
