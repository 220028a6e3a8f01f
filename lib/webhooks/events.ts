/**
 * The events an app can subscribe to, and the body a webhook carries. The body names the event,
 * the request, its kind and what its end user sees (the /api/track projection): no engine word a
 * customer could read.
 */
import type { TrackingView } from "@/lib/projection/types";

export const WEBHOOK_EVENT_TYPES = [
  "request.completed",
  "request.needs_review",
  "request.review_resolved",
  "request.could_not_be_completed",
  "request.cancelled",
] as const;
/** The events a webhook endpoint can subscribe to. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** How a person settled a review, in the app's words. */
export type ReviewOutcome = "delivered" | "not_delivered" | "abandoned";

const REVIEW_OUTCOMES: Record<string, ReviewOutcome> = { confirm_delivered: "delivered", confirm_not_delivered: "not_delivered", abandon: "abandoned" };

/** The JSON a webhook delivers (Standard Webhooks' type / timestamp / data). */
export type WebhookBody = {
  readonly type: WebhookEventType;
  /** When the change committed (ISO 8601, database clock). */
  readonly timestamp: string;
  readonly data: {
    readonly requestId: string;
    readonly kind: string;
    /** Only for request.review_resolved. */
    readonly review?: ReviewOutcome;
    readonly progress: TrackingView | null;
  };
};

export function webhookBody(event: { type: WebhookEventType; createdAt: Date; workflowId: string; kind: string; detail: { resolution?: string } | null }, progress: TrackingView | null): WebhookBody {
  const review = event.detail?.resolution ? REVIEW_OUTCOMES[event.detail.resolution] : undefined;
  return {
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: { requestId: event.workflowId, kind: event.kind, ...(review ? { review } : {}), progress },
  };
}
