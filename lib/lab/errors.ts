/** Refusals of the demo fault lab: outside demo mode, a worker it may not signal, a destination that failed it. */
import { FencelineError } from "@/lib/engine/errors";

/** The fault lab exists only in demo mode (`npm start`). */
export class LabUnavailableError extends FencelineError {
  readonly code = "lab_unavailable";
  constructor() {
    super("the fault lab exists only in demo mode (npm start)");
  }
}

export type SignalRefusal = "session_stopped" | "other_host" | "not_a_worker" | "signal_failed";

/** The lab refuses to signal a process that is not, or no longer, a worker of this host. */
export class SignalRefusedError extends FencelineError {
  readonly code = "signal_refused";
  constructor(readonly refusal: SignalRefusal, message: string) {
    super(message);
  }
}

export type DestinationFailure = "unreachable" | "refused" | "invalid_answer";

/** The synthetic destination did not answer the lab's proxy, refused it, or answered out of schema. */
export class LabDestinationError extends FencelineError {
  readonly code = "lab_destination";
  constructor(readonly failure: DestinationFailure, message: string) {
    super(message);
  }
}
