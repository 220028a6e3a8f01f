/**
 * The events an app can subscribe to, and the body a webhook carries. The body names the event,
 * the request, its kind and what its end user sees (the /api/track projection): no engine word a
 * customer could read.
 */
import type { TrackingView } from "@/lib/projection/types";
import type { CompensationView } from "@/lib/compensation/types";

/**
 * What a request's undoing stands at, for its app (lib/compensation): the steps whose effects were
 * undone, those whose undo is still open (running, or in review), and those not undone and why.
 * Carried by request.cancelled, request.could_not_be_completed and request.undone (sent when the
 * last undo has its receipt).
 */
export type WebhookUndo = {
  readonly state: CompensationView["state"];
  readonly undone: readonly string[];
  readonly open: readonly string[];
  readonly notUndone: readonly { readonly step: string; readonly why: string }[];
};

export const webhookUndoOf = (view: CompensationView): WebhookUndo => ({
  state: view.state,
  undone: view.undos.filter((undo) => undo.state === "completed" || undo.state === "completed_without_effect").map((undo) => undo.undoes),
  open: view.undos.filter((undo) => undo.state !== "completed" && undo.state !== "completed_without_effect").map((undo) => undo.undoes),
  notUndone: view.notUndone.map(({ step, why }) => ({ step, why })),
});

export const WEBHOOK_EVENT_TYPES = [
  "request.completed",
  "request.needs_review",
  "request.review_resolved",
  "request.could_not_be_completed",
  "request.cancelled",
  "request.undone",
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
    /** Only for a request whose workflow undoes what it did: what was undone and what is still open. */
    readonly undo?: WebhookUndo;
    readonly progress: TrackingView | null;
  };
};

export function webhookBody(
  event: { type: WebhookEventType; createdAt: Date; workflowId: string; kind: string; detail: { resolution?: string } | null },
  progress: TrackingView | null,
  compensation: CompensationView | null = null,
): WebhookBody {
  const review = event.detail?.resolution ? REVIEW_OUTCOMES[event.detail.resolution] : undefined;
  return {
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: { requestId: event.workflowId, kind: event.kind, ...(review ? { review } : {}), ...(compensation ? { undo: webhookUndoOf(compensation) } : {}), progress },
  };
}
