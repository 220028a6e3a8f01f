/* The shapes `GET /api/requests/{id}` and `fenceline/client` share. */
import type { TrackingView } from "@/lib/projection/types";

/** Where a request stands: `active` until it ends as `completed`, `cancelled` or `failed`. */
export type RequestStatus = "active" | "completed" | "cancelled" | "failed";

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

