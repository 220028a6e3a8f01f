/**
 * The engine's vocabulary as the engineer views name it: plain constants with no imports, so
 * both the API contract and client components can use them without pulling in server code.
 */
export const WORKFLOW_STATUSES = ["active", "completed", "cancelled", "failed"] as const;
export const STEP_STATES = [
  "blocked", "ready", "leased", "completed", "completed_without_effect", "superseded", "cancelled", "rejected", "failed", "indeterminate",
] as const;
export const LEASE_EVENT_KINDS = ["acquired", "renewed", "renewal_refused", "expiry_observed", "released", "revoked"] as const;
export const RECOVERY_CATEGORIES = [
  "make_ready", "retry_same_identity", "retry_same_key", "status_query", "review", "reconcile", "acknowledge", "give_up",
] as const;
export const LAB_ACTIONS = ["pause", "resume", "kill"] as const;
export const DESTINATION_KINDS = ["fenced", "idempotent", "queryable", "opaque"] as const;
