/**
 * The spans of one claimed attempt, as its worker runs it (lib/telemetry/spans.ts has the tree).
 * `fenceline.step` covers the worker's hold of the step, from claim to its end; `fenceline.attempt`
 * the handler, the destination call and the receipt; `fenceline.adapter.call` the call itself,
 * whose traceparent the adapter sends on. Both are children of the traceparent stored with the
 * request, so the attempt of a recovering worker joins the same trace as the first one.
 *
 * With no tracer provider registered these are the API's no-op spans: nothing is formatted or
 * recorded, and the stored traceparent still passes through to the destination.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import type { AuthorityLostError } from "@/lib/engine/errors";
import type { ClaimedStep } from "@/lib/engine/types";
import { ATTRIBUTES, SPAN_EVENTS, SPAN_NAMES, tracer } from "@/lib/telemetry/spans";
import { contextOfTraceParent, traceHeadersOf } from "@/lib/telemetry/trace-context";

/** How an attempt ended, as its span says. */
export type AttemptEnd = "completed" | "completed_without_effect" | "skipped" | "parked" | "waiting" | "failed" | "authority_lost" | "handed_back";

export class AttemptTrace {
  private readonly stepSpan: Span;
  private readonly stepContext: Context;
  private attemptSpan: Span | null = null;
  private attemptContext: Context | null = null;
  /** The destination answered this attempt: a refused write of it is kept as a late observation. */
  answered = false;
  private lastCheckpoint: string | null = null;

  constructor(private readonly step: ClaimedStep) {
    const parent = contextOfTraceParent(step.traceParent);
    this.stepSpan = tracer.startSpan(SPAN_NAMES.step, undefined, parent);
    if (this.stepSpan.isRecording()) {
      this.stepSpan.setAttributes({
        [ATTRIBUTES.requestId]: step.workflowId,
        [ATTRIBUTES.kind]: step.kind,
        [ATTRIBUTES.step]: step.stepName,
        [ATTRIBUTES.stepId]: step.stepId,
        [ATTRIBUTES.fencingTerm]: step.fencingTerm.toString(),
        [ATTRIBUTES.epoch]: step.epoch.toString(),
      });
    }
    this.stepContext = trace.setSpan(parent, this.stepSpan);
  }

  /** The handler starts: the attempt's span, with the workflow's opt-in attributes (already bounded and redacted). */
  beginAttempt(optIn: Attributes): void {
    const span = tracer.startSpan(SPAN_NAMES.attempt, undefined, this.stepContext);
    if (span.isRecording()) {
      const { step } = this;
      span.setAttributes({
        ...optIn,
        [ATTRIBUTES.step]: step.stepName,
        [ATTRIBUTES.attemptId]: step.attemptId,
        [ATTRIBUTES.attemptNumber]: step.attemptsStarted,
        [ATTRIBUTES.fencingTerm]: step.fencingTerm.toString(),
        [ATTRIBUTES.mode]: step.mode,
      });
      this.stepSpan.setAttributes(optIn);
    }
    this.attemptSpan = span;
    this.attemptContext = trace.setSpan(this.stepContext, span);
  }

  /** The context the handler and its adapter run in: the attempt's span. */
  get context(): Context {
    return this.attemptContext ?? this.stepContext;
  }

  /** A checkpoint was written: the attempt's span keeps the last one reached (set when it ends; no event each, they cost more than they tell). */
  checkpoint(name: string): void {
    this.lastCheckpoint = name;
  }

  /**
   * Runs the destination call under its own client span, in its context, and hands `call` the
   * headers that carry it (`traceparent`) to the destination.
   */
  async call<T>(adapter: string, adapterVersion: string, operation: "create" | "query", call: (headers: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
    const span = tracer.startSpan(SPAN_NAMES.adapterCall, { kind: SpanKind.CLIENT }, this.context);
    if (span.isRecording()) span.setAttributes({ [ATTRIBUTES.adapter]: adapter, [ATTRIBUTES.adapterVersion]: adapterVersion, [ATTRIBUTES.operation]: operation });
    const callContext = trace.setSpan(this.context, span);
    try {
      const answer = await context.with(callContext, () => call(traceHeadersOf(callContext)));
      return answer;
    } catch (error) {
      if (span.isRecording()) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  }

  /** A fenced write of this attempt was refused: the refusal, and the answer kept as a late observation when there was one. */
  refused(error: AuthorityLostError): void {
    const span = this.attemptSpan ?? this.stepSpan;
    if (!span.isRecording()) return;
    const attributes = { [ATTRIBUTES.operation]: error.operation, [ATTRIBUTES.reason]: error.reason, [ATTRIBUTES.fencingTerm]: error.presentedTerm.toString() };
    span.addEvent(SPAN_EVENTS.fencingRejection, error.currentTerm === null ? attributes : { ...attributes, "fenceline.fencing_term.current": error.currentTerm.toString() });
    if (this.answered) span.addEvent(SPAN_EVENTS.lateObservation, { [ATTRIBUTES.operation]: error.operation });
  }

  /** Ends both spans with how the attempt ended. */
  end(outcome: AttemptEnd, details: { readonly verification?: string } = {}): void {
    const failed = outcome === "failed" || outcome === "authority_lost";
    const attempt = this.attemptSpan;
    if (attempt?.isRecording()) {
      attempt.setAttributes({
        [ATTRIBUTES.outcome]: outcome,
        ...(this.lastCheckpoint === null ? {} : { [ATTRIBUTES.checkpoint]: this.lastCheckpoint }),
        ...(details.verification ? { [ATTRIBUTES.verification]: details.verification } : {}),
      });
      if (failed) attempt.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    }
    attempt?.end();
    if (this.stepSpan.isRecording()) {
      this.stepSpan.setAttribute(ATTRIBUTES.outcome, outcome);
      if (failed) this.stepSpan.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    }
    this.stepSpan.end();
  }
}
