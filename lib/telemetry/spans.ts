/**
 * Fenceline's spans, in its own words. One request is one trace:
 *
 *   app span ─ fenceline.request (created: kind, request id)
 *                ├─ fenceline.step (one claim of one step by one worker: step, fencing term, epoch, mode)
 *                │    └─ fenceline.attempt (the handler, the destination call, the receipt: checkpoint
 *                │         │   reached, outcome, verification method; fencing rejections and late
 *                │         │   observations as events)
 *                │         └─ fenceline.adapter.call (client span; its traceparent goes to the destination)
 *                ├─ fenceline.recovery (an expired lease decided from evidence: recovery category;
 *                │    lease expired and review case opened as events)
 *                └─ fenceline.step … the next attempt, in whichever process claims it
 *
 * Every span of a request is a child of the traceparent stored with the request, so a recovery
 * by another worker, minutes later, continues the same trace. No input, payload, result or
 * credential is recorded: only these attributes, plus what a workflow opts in to with
 * `traceAttributes` (bounded and redacted by lib/telemetry/redact.ts).
 */
import { trace, type Attributes, type Span } from "@opentelemetry/api";

export const SPAN_NAMES = {
  request: "fenceline.request",
  step: "fenceline.step",
  attempt: "fenceline.attempt",
  adapterCall: "fenceline.adapter.call",
  recovery: "fenceline.recovery",
  event: "fenceline.event",
} as const;

export const ATTRIBUTES = {
  requestId: "fenceline.request.id",
  kind: "fenceline.kind",
  workflowVersion: "fenceline.workflow.version",
  created: "fenceline.request.created",
  step: "fenceline.step",
  stepId: "fenceline.step.id",
  attemptId: "fenceline.attempt.id",
  attemptNumber: "fenceline.attempt.number",
  mode: "fenceline.attempt.mode",
  fencingTerm: "fenceline.fencing_term",
  epoch: "fenceline.epoch",
  checkpoint: "fenceline.checkpoint",
  outcome: "fenceline.outcome",
  verification: "fenceline.verification_method",
  recoveryCategory: "fenceline.recovery.category",
  recoveryTrigger: "fenceline.recovery.trigger",
  adapter: "fenceline.adapter",
  adapterVersion: "fenceline.adapter.version",
  eventName: "fenceline.event.name",
  reason: "fenceline.reason",
  operation: "fenceline.operation",
} as const;

export const SPAN_EVENTS = {
  leaseExpired: "fenceline.lease_expired",
  fencingRejection: "fenceline.fencing_rejection",
  lateObservation: "fenceline.late_observation",
  reviewCaseOpened: "fenceline.review_case_opened",
} as const;

/**
 * Fenceline's tracer. The API's proxy: spans go to whichever provider is registered, whenever it
 * is (lib/telemetry/start.ts, an adopter's own SDK, or fenceline/testing's collector); none is a no-op.
 */
export const tracer = trace.getTracer("fenceline");

let active = false;

/**
 * True once a provider was registered through lib/telemetry: work done only for spans (a query
 * for the traceparents of recovered requests) is skipped when nothing would record them.
 */
export function tracingActive(): boolean {
  return active;
}

/** Marks tracing as started (lib/telemetry/start.ts and the test collector). */
export function markTracingActive(on: boolean): void {
  active = on;
}

/** Sets attributes on a span that records; nothing otherwise (no work for a no-op span). */
export function setAttributes(span: Span, attributes: Attributes): void {
  if (span.isRecording()) span.setAttributes(attributes);
}
