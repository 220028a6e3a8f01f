/** The event room's refusals, each mapped to its problem in lib/api/http.ts. */
import { FencelineError } from "@/lib/engine/errors";

/** No registered step waits for an event of this name, so nothing could ever consume it. */
export class UnknownEventError extends FencelineError {
  readonly code = "unknown_event";
  constructor(readonly name: string) {
    super(`no registered workflow step waits for an event named "${name}": send only the names your workflows' event waits declare`);
  }
}

/** The sender already used this idempotency key for another event (another name, key or payload). */
export class EventKeyReusedError extends FencelineError {
  readonly code = "event_key_reused";
  constructor() {
    super("this Idempotency-Key already names a different event (another name, key or payload); use a new key for a new event");
  }
}

/** A one-time URL that was used, expired with its wait, or never existed. */
export class WaitUrlGoneError extends FencelineError {
  readonly code = "wait_url_gone";
  constructor() {
    super("this one-time URL is no longer valid: it was used, or its wait ended (settled, timed out or cancelled)");
  }
}
