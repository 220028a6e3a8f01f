/**
 * The engine's vocabulary: every closed list of words it stores or answers with, written once.
 * The TypeScript unions, the zod enums (`z.enum(CHECKPOINTS)`), the SQL lists and the views'
 * order and labels are derived from these; `lib/db/vocabulary.db.test.ts` checks each list that
 * is a PostgreSQL enum against that enum's labels, in order, so a migration and the code cannot
 * drift apart. No imports, so client components can use it without pulling in server code.
 */

/** `cancelling` and `failing`: the request ended, and the effects it had are being undone (lib/compensation). */
export const WORKFLOW_STATUSES = ["active", "completed", "cancelled", "failed", "cancelling", "failing"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** Where a step can stand, the `step_state` enum's labels in order (docs/how-it-works). */
export const STEP_STATES = [
  "blocked", "ready", "leased", "waiting", "completed", "completed_without_effect", "superseded", "cancelled", "rejected", "failed", "indeterminate",
] as const;
/** Where a step stands: `blocked` on its dependencies, `ready`, `leased` to a worker, `waiting` (holding nothing), or ended (`completed`, `completed_without_effect`, `superseded`, `cancelled`, `rejected`, `failed`); `indeterminate` while its outcome is unknown. */
export type StepState = (typeof STEP_STATES)[number];

/** Step states nothing leaves: the step will not run again. */
export const FINAL_STEP_STATES = [
  "completed", "completed_without_effect", "superseded", "cancelled", "rejected", "failed",
] as const satisfies readonly StepState[];

export const ATTEMPT_MODES = ["execute", "retry_same_identity", "status_query"] as const;
export type AttemptMode = (typeof ATTEMPT_MODES)[number];

/** An attempt's checkpoints, in the order it passes them. */
export const CHECKPOINTS = ["created", "identity_persisted", "invocation_began", "response_observed", "receipt_committed"] as const;
export type Checkpoint = (typeof CHECKPOINTS)[number];

/** `waiting`: the attempt armed a wait (a timer, an event) and the step parked without a lease. */
export const ATTEMPT_OUTCOMES = ["effect", "no_action_needed", "skip", "waiting", "failed", "released", "lease_lost"] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** What the destination told an attempt about its effect; no answer is null. */
export const EFFECT_OBSERVATIONS = ["present", "absent"] as const;
export type EffectObservation = (typeof EFFECT_OBSERVATIONS)[number];

export const LEASE_END_REASONS = ["receipt", "released", "expired", "revoked", "failed"] as const;
export type LeaseEndReason = (typeof LEASE_END_REASONS)[number];

export const LEASE_EVENT_KINDS = ["acquired", "renewed", "renewal_refused", "expiry_observed", "released", "revoked"] as const;
export type LeaseEventKind = (typeof LEASE_EVENT_KINDS)[number];

/**
 * How a receipt's conclusion was verified. `database_clock`: a timer fired, or a wait timed out,
 * at a time the database clock decided; `event_received`: an accepted event record settled a wait;
 * `children_ended`: every child request a step started has ended, and their ends are its results.
 */
export const VERIFICATION_METHODS = [
  "direct_response", "idempotent_replay", "status_query", "manual_review", "no_action_needed", "database_clock", "event_received", "children_ended",
] as const;
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];

/** Why a fenced write was refused (a fencing rejection). */
export const REJECTION_REASONS = [
  "superseded", "not_owner", "expired", "revoked", "lease_ended", "epoch_stale", "workflow_inactive", "checkpoint_order",
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/**
 * Why a renewal was refused: every rejection reason, spelled the same, and the conditions only a
 * renewal checks. `changed_while_renewing` names a refusal whose cause committed while the
 * renewal ran and is not visible to its snapshot.
 */
export const RENEWAL_REFUSAL_REASONS = [
  ...REJECTION_REASONS,
  "policy_changed", "checkpoint_version_mismatch", "deadline_reached", "changed_while_renewing",
] as const;
export type RenewalRefusalReason = (typeof RENEWAL_REFUSAL_REASONS)[number];

export const RECOVERY_TRIGGERS = ["lease_expired", "attempt_failed", "lease_revoked"] as const;
export type RecoveryTrigger = (typeof RECOVERY_TRIGGERS)[number];

export const RECOVERY_CATEGORIES = [
  "make_ready", "retry_same_identity", "retry_same_key", "status_query", "review", "reconcile", "acknowledge", "give_up",
] as const;
export type RecoveryCategory = (typeof RECOVERY_CATEGORIES)[number];

export const REVIEW_STATUSES = ["open", "resolved"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export const REVIEW_RESOLUTIONS = ["confirm_delivered", "confirm_not_delivered", "abandon"] as const;
export type ReviewResolution = (typeof REVIEW_RESOLUTIONS)[number];

export const PERMIT_STATES = ["active", "held", "released"] as const;

/** What repeating a call to an adapter's destination may do (lib/adapters/contract.ts). */
export const REPETITION_POLICIES = ["safe", "idempotency_protected", "reconcilable", "prohibited"] as const;
export type PermitState = (typeof PERMIT_STATES)[number];

/** A word as an SQL literal, for a statement's text. The words above need no escaping; anything else is refused. */
export function sqlWord(word: string): string {
  if (!/^[a-z_]+$/.test(word)) throw new Error(`sqlWord: not a vocabulary word: ${JSON.stringify(word)}`);
  return `'${word}'`;
}

/** Words as a list of SQL literals: `s.state IN (${sqlList(FINAL_STEP_STATES)})`. */
export const sqlList = (words: readonly string[]): string => words.map(sqlWord).join(", ");
