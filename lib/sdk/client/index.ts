/**
 * `fenceline/client`: your backend starts and reads requests, and sends them events, with an app key.
 *
 * It imports no worker, engine or database code: it needs only `fetch`. Types of your workflows
 * arrive by `import type` of their definitions.
 *
 * @packageDocumentation
 * @module fenceline/client
 */
export { createClient } from "@/lib/client/client";
export type { AnyWorkflow, ClientOptions, CreatedRequest, CreateOptions, FencelineClient, ListOptions, RequestDetail, RequestList, SendEventOptions, WaitOptions } from "@/lib/client/client";
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
export type { RequestRecord, RequestStatus, RequestWithProgress } from "@/lib/requests/types";
export type { Milestone as ProgressMilestone, TrackingView } from "@/lib/projection/types";
export { verifyWebhook, WebhookVerificationError } from "@/lib/client/webhooks";
export type { VerifiedWebhook, VerifyWebhookOptions } from "@/lib/client/webhooks";
export type { ReviewOutcome, WebhookBody, WebhookEventType } from "@/lib/webhooks/events";
