/* The shapes `GET /api/requests/{id}` and `fenceline/client` share. */
import type { TrackingView } from "@/lib/projection/types";

/** Where a request stands: `active` until it ends as `completed`, `cancelled` or `failed`. */
export type RequestStatus = "active" | "completed" | "cancelled" | "failed" | "cancelling" | "failing";

/** A request as its app reads it. */
export type RequestRecord = {
  readonly id: string;
  readonly kind: string;
  readonly version: number;
  readonly status: RequestStatus;
  /** Why it ended, in the engine's words (for the app's engineers, not its customers). */
  readonly statusReason: string | null;
  readonly trackingToken: string;
  /** The end user's page, relative to the Fenceline URL: /track/<trackingToken>. */
  readonly trackUrl: string;
  /** ISO 8601, from the database clock. */
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly deadlineAt: string | null;
  /** 1–9, higher claimed first: as created, or its kind's default. */
  readonly priority: number;
  /** The tenant or customer it counts against for fair share, as created; null when none. */
  readonly concurrencyKey: string | null;
};

/** A request with the end-user projection of its progress: what its tracking page shows. */
export type RequestWithProgress = RequestRecord & { readonly progress: TrackingView };


/**
 * Where one step stands, in the app's words: `pending` (before it runs), `in_progress` (running,
 * or waiting without holding anything), `completed`, `completed_without_effect` (skipped or
 * nothing to do), `needs_review` (its outcome is unknown until a person settles it), `failed`,
 * `cancelled`, or `superseded`.
 */
export type StepEvidenceStatus = "pending" | "in_progress" | "completed" | "completed_without_effect" | "needs_review" | "failed" | "cancelled" | "superseded";

/** How a receipt's effect was verified. */
export type EvidenceVerification = "direct_response" | "idempotent_replay" | "status_query" | "manual_review" | "no_action_needed" | "database_clock" | "event_received";

/** A step's receipt as its app reads it: the evidence of what happened at the destination. */
export type ReceiptEvidence = {
  /**
   * How the outcome was established: the destination answered (`direct_response`), replayed its
   * earlier answer (`idempotent_replay`), a status query found it (`status_query`), a person
   * confirmed it (`manual_review`), nothing had to be done (`no_action_needed`), or the step
   * waited (`database_clock` for a timer, `event_received` for an event).
   */
  readonly verificationMethod: EvidenceVerification;
  /** The destination's own reference (a refund id, a parcel number); null when it gave none. */
  readonly externalReference: string | null;
  /** What the destination answered (or the step computed), as the receipt keeps it. */
  readonly observedResult: unknown;
  /** When the receipt was committed (ISO 8601, database clock). */
  readonly at: string;
};

/** An open review case: the step's outcome is unknown and support is looking at it. */
export type ReviewCaseEvidence = {
  readonly id: string;
  /** Why the case was opened, for the app's engineers. */
  readonly reason: string;
  readonly openedAt: string;
  /** When support means to have settled it. */
  readonly reviewBy: string;
};

/** One step of a request with its evidence: its receipt once it has one, and its open review cases. */
export type StepEvidence = {
  /** The step's name in its workflow. */
  readonly name: string;
  readonly position: number;
  readonly status: StepEvidenceStatus;
  readonly receipt: ReceiptEvidence | null;
  readonly openReviewCases: readonly ReviewCaseEvidence[];
};

/** A request with its steps' evidence: `GET /api/requests/{id}?include=steps`, scope requests:evidence. */
export type RequestWithSteps = RequestWithProgress & { readonly steps: readonly StepEvidence[] };
