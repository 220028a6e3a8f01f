import { FencelineError } from "@/lib/engine/errors";

/** Why a resolution or a change of holder cannot apply to the case as it is now. */
export type ReviewConflict = "already_resolved" | "already_taken" | "stale_version" | "not_awaiting_review" | "request_ended";

/** A resolution or a change of holder that cannot apply to the case as it is now; `details` say why, for the person. */
export class ReviewConflictError extends FencelineError {
  readonly code = "review_conflict";
  constructor(
    readonly conflict: ReviewConflict,
    message: string,
    readonly details: {
      readonly currentVersion: number;
      readonly resolution?: string | null;
      readonly resolvedBy?: string | null;
      readonly resolvedAt?: string | null;
      readonly assignee?: string | null;
      readonly assignedAt?: string | null;
    },
  ) {
    super(message);
  }
}
