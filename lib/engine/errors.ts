/**
 * The typed error family. Each error carries a stable `code`; lib/api/http.ts (toProblem) maps
 * each to its HTTP problem in one place. Modules above the engine (auth, review, metrics, the
 * lab) extend FencelineError in their own errors.ts. Operating errors (database down) are not
 * wrapped here: they surface as the driver's own errors and callers handle them as such.
 */
import type { RejectionReason } from "./vocabulary";

export abstract class FencelineError extends Error {
  abstract readonly code: string;
}

/**
 * A fenced write was refused: the caller no longer holds authority over the step. It is never a
 * retry signal. The refusal was recorded as a fencing rejection and its payload kept as a late
 * observation before this error was raised.
 */
export class AuthorityLostError extends FencelineError {
  readonly code = "authority_lost";
  constructor(
    readonly operation: string,
    readonly stepId: string,
    readonly presentedTerm: bigint,
    readonly reason: RejectionReason,
    readonly currentTerm: bigint | null,
  ) {
    super(
      `${operation} refused for step ${stepId}: term ${presentedTerm} lost authority (${reason}` +
        (currentTerm === null ? ")" : `, current term ${currentTerm})`),
    );
  }
}

/** A programmer error: checkpoints were written out of order for an attempt that still holds authority. */
export class CheckpointOrderError extends FencelineError {
  readonly code = "checkpoint_order";
  constructor(readonly operation: string, readonly stepId: string) {
    super(`${operation} is out of order for step ${stepId}`);
  }
}

export class NotFoundError extends FencelineError {
  readonly code = "not_found";
  constructor(readonly what: string, readonly id: string) {
    super(`${what} ${id} not found`);
  }
}

export class InvalidWorkflowError extends FencelineError {
  readonly code = "invalid_workflow";
}

/** A release was asked for work whose invocation already began; only recovery may decide that step now. */
export class ReleaseRefusedError extends FencelineError {
  readonly code = "release_refused";
  constructor(readonly stepId: string, readonly checkpoint: string) {
    super(`step ${stepId} cannot be released at checkpoint ${checkpoint}: its invocation began`);
  }
}

/**
 * A registration presents a workflow kind and version, or an adapter name and version, that is
 * already registered with another shape. A change needs a new version.
 */
export class DefinitionConflictError extends FencelineError {
  readonly code = "definition_conflict";
  constructor(
    /** `workflow checkout@1` or `adapter payments@1`. */
    readonly subject: string,
    readonly differences: readonly string[],
  ) {
    super(`${subject} is already registered with another shape (${differences.join("; ")}); register the change as a new version`);
  }
}

/** A registration that is not consistent as data, or names step classes that do not exist. */
export class InvalidDefinitionError extends FencelineError {
  readonly code = "invalid_definition";
  constructor(readonly problems: readonly string[]) {
    super(`the definitions cannot be registered: ${problems.join("; ")}`);
  }
}

export type InputIssue = { readonly path: string; readonly message: string };

/** A request's input does not match its workflow's input schema; `issues` names each field. */
export class InvalidInputError extends FencelineError {
  readonly code = "invalid_input";
  constructor(
    readonly subject: string,
    readonly issues: readonly InputIssue[],
  ) {
    super(`invalid input for ${subject}: ${issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ")}`);
  }
}

/** A request names a workflow kind (or version) that no worker has registered. */
export class UnknownKindError extends FencelineError {
  readonly code = "unknown_kind";
  constructor(
    readonly kind: string,
    readonly version: number | null,
    readonly known: readonly { kind: string; versions: readonly number[] }[],
  ) {
    const what = version === null ? `workflow kind "${kind}"` : `workflow ${kind}@${version}`;
    const existing = known.length === 0 ? "none is registered yet: start a worker that serves it" : `registered: ${known.map((k) => `${k.kind}@${k.versions.join(",")}`).join("; ")}`;
    super(`no ${what} is registered (${existing})`);
  }
}

/** An epoch transition was asked for while another is under way; one runs at a time. */
export class TransitionInProgressError extends FencelineError {
  readonly code = "transition_in_progress";
  constructor() {
    super("an epoch transition is already in progress");
  }
}

/** An idempotency key already names a request with another input: one key names one intent. */
export class IdempotencyKeyReusedError extends FencelineError {
  readonly code = "idempotency_key_reused";
  constructor() {
    super("this Idempotency-Key already names a request with a different input; use a new key for a new request");
  }
}

/** A revoke was asked for a step that holds no open lease. */
export class NoOpenLeaseError extends FencelineError {
  readonly code = "no_open_lease";
  constructor(readonly stepId: string) {
    super(`step ${stepId} holds no open lease: nothing to revoke`);
  }
}

/** A request that is no longer active cannot be cancelled: it already ended this way. */
export class RequestEndedError extends FencelineError {
  readonly code = "request_ended";
  constructor(
    readonly workflowId: string,
    readonly status: string,
  ) {
    super(`request ${workflowId} is ${status}: only an active request can be cancelled`);
  }
}

/** A wait step asked to park with a request its room cannot take (no such room, a field out of bounds). */
export class InvalidWaitError extends FencelineError {
  readonly code = "invalid_wait";
}
