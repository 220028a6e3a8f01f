/**
 * Recovery decisions as spans of their requests' traces: `fenceline.recovery`, a child of the
 * traceparent stored with the request, with the recovery category and the evidence it was
 * decided on (checkpoint reached, fencing term, epoch), and the engine's events on it: the
 * lease expired, a review case opened. Written after the decisions commit, by whichever process
 * decided them; the attempt that follows, in whichever worker claims it, joins the same trace.
 * Costs nothing when no tracer provider was started: the traceparents are not even read.
 */
import { diag } from "@opentelemetry/api";
import type { Queryable } from "./db";
import type { RecoveryDecision } from "./recovery-rules";
import { traceParentsOf } from "./trace-parents";
import type { Checkpoint, RecoveryTrigger } from "./vocabulary";
import { ATTRIBUTES, SPAN_EVENTS, SPAN_NAMES, tracer, tracingActive } from "@/lib/telemetry/spans";
import { contextOfTraceParent } from "@/lib/telemetry/trace-context";

export type TracedDecision = {
  readonly workflowId: string;
  readonly stepId: string;
  readonly fencingTerm: string;
  readonly epoch: string;
  readonly checkpoint: Checkpoint;
  readonly expiresAt: Date;
  readonly trigger: RecoveryTrigger;
  readonly decision: RecoveryDecision;
};

/** Writes the decisions' spans. Best effort: the decisions are committed, and a failure here only loses spans (reported through the OpenTelemetry diagnostics). */
export async function traceDecisions(db: Queryable, decided: readonly TracedDecision[]): Promise<void> {
  if (!tracingActive() || decided.length === 0) return;
  let traceParents: Map<string, string>;
  try {
    traceParents = await traceParentsOf(db, decided.map((d) => d.workflowId));
  } catch (error) {
    diag.warn(`fenceline: the traceparents of ${decided.length} recovered requests could not be read; their recovery spans start traces of their own`, error);
    traceParents = new Map();
  }
  for (const d of decided) {
    const span = tracer.startSpan(
      SPAN_NAMES.recovery,
      {
        attributes: {
          [ATTRIBUTES.requestId]: d.workflowId,
          [ATTRIBUTES.stepId]: d.stepId,
          [ATTRIBUTES.fencingTerm]: d.fencingTerm,
          [ATTRIBUTES.epoch]: d.epoch,
          [ATTRIBUTES.checkpoint]: d.checkpoint,
          [ATTRIBUTES.recoveryTrigger]: d.trigger,
          [ATTRIBUTES.recoveryCategory]: d.decision.category,
        },
      },
      contextOfTraceParent(traceParents.get(d.workflowId)),
    );
    if (d.trigger === "lease_expired") {
      span.addEvent(SPAN_EVENTS.leaseExpired, { [ATTRIBUTES.fencingTerm]: d.fencingTerm, "fenceline.lease.expires_at": d.expiresAt.toISOString() });
    }
    if (d.decision.category === "review") span.addEvent(SPAN_EVENTS.reviewCaseOpened, { [ATTRIBUTES.reason]: d.decision.reason.slice(0, 200) });
    span.end();
  }
}
