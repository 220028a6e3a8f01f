import { FencelineError } from "@/lib/engine/errors";
import type { StepState, WorkflowStatus } from "@/lib/engine/vocabulary";

/** What a request is now, for an operator whose view of it was older. */
export type CurrentRequest = {
  readonly status: WorkflowStatus;
  readonly version: string;
  readonly steps: readonly { readonly id: string; readonly name: string; readonly state: StepState; readonly fencingTerm: number; readonly attemptsStarted: number }[];
};

/** An action sent with a version of the request that is no longer current: nothing was done. */
export class StaleRequestViewError extends FencelineError {
  readonly code = "stale_request_view";
  constructor(
    readonly requestId: string,
    readonly current: CurrentRequest,
  ) {
    super(`request ${requestId} changed since it was read (now ${current.status}); nothing was done: look again and retry`);
  }
}

/** A rerun the request's state does not allow; `why` says what is in the way. */
export class RerunRefusedError extends FencelineError {
  readonly code = "rerun_refused";
  constructor(
    readonly requestId: string,
    readonly why: string,
    readonly current: CurrentRequest,
  ) {
    super(`request ${requestId} cannot be rerun from that step: ${why}`);
  }
}
