/**
 * Creating a request: of a registered workflow kind (its highest version unless one is named),
 * from an input checked against that version's schema, written with its steps in one statement.
 * An Idempotency-Key makes the call repeatable: the same requester, key and input return the
 * request it first created; the same key with another kind or input is refused, because one key
 * names one intent.
 */
import { context, SpanStatusCode, trace, type Context } from "@opentelemetry/api";
import type { Pool } from "pg";
import { IdempotencyKeyReusedError, UnknownKindError } from "@/lib/engine/errors";
import { findWorkflowDefinition, registeredKinds } from "@/lib/engine/registration";
import { createWorkflow } from "@/lib/engine/workflow";
import { ATTRIBUTES, setAttributes, SPAN_NAMES, tracer } from "@/lib/telemetry/spans";
import { contextOfTraceParent, formatTraceParent } from "@/lib/telemetry/trace-context";
import { instantiateWorkflow } from "./instantiate";
import { readRequest } from "./read";
import type { RequestRecord } from "./types";

export type CreateRequestOptions = {
  readonly kind: string;
  /** A registered version of the kind; its highest when null. */
  readonly version: number | null;
  readonly input: unknown;
  readonly idempotencyKey: string | null;
  /** Who asks: `app:<name>` for an app key, `api` for anonymous demo requests. */
  readonly requester: string;
  /** Overrides the definition's own deadline. */
  readonly deadlineAt: Date | null;
  /** 1–9, higher claimed first; the kind's default priority when null. A child request passes its parent's. */
  readonly priority?: number | null;
  /** The tenant or customer the request counts against for fair share; none when null. A child request passes its parent's. */
  readonly concurrencyKey?: string | null;
  /**
   * The kinds the requester may start (an app key's); absent or empty: every registered kind. A
   * kind outside them is unknown to this requester, and the refusal lists only these.
   */
  readonly allowedKinds?: readonly string[];
  /**
   * The W3C traceparent the caller sent (the client's `requests.create` inside the app's span).
   * Used when no span is active in this process; the request is created under a
   * `fenceline.request` span whose traceparent is stored with it.
   */
  readonly traceParent?: string | null;
};

/** The registered kinds `allowed` names (every one when it names none). */
async function kindsFor(pool: Pool, allowed: readonly string[]): Promise<{ kind: string; versions: number[] }[]> {
  const registered = await registeredKinds(pool);
  return allowed.length === 0 ? registered : registered.filter((known) => allowed.includes(known.kind));
}

/** The span a request is created under: this process's active one (a traced web app), else the caller's. */
function parentOf(traceParent: string | null | undefined): Context {
  const active = context.active();
  return trace.getSpanContext(active) ? active : contextOfTraceParent(traceParent);
}

export async function createRequest(pool: Pool, options: CreateRequestOptions): Promise<{ created: boolean; request: RequestRecord }> {
  const span = tracer.startSpan(SPAN_NAMES.request, { attributes: { [ATTRIBUTES.kind]: options.kind } }, parentOf(options.traceParent));
  try {
    const outcome = await createTraced(pool, options, formatTraceParent(span.spanContext()));
    setAttributes(span, { [ATTRIBUTES.requestId]: outcome.request.id, [ATTRIBUTES.created]: outcome.created, [ATTRIBUTES.workflowVersion]: outcome.request.version });
    return outcome;
  } catch (error) {
    if (span.isRecording()) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
    throw error;
  } finally {
    span.end();
  }
}

async function createTraced(pool: Pool, options: CreateRequestOptions, traceParent: string | null): Promise<{ created: boolean; request: RequestRecord }> {
  const allowed = options.allowedKinds ?? [];
  const mayStart = allowed.length === 0 || allowed.includes(options.kind);
  const definition = mayStart ? await findWorkflowDefinition(pool, options.kind, options.version) : null;
  if (!definition) throw new UnknownKindError(options.kind, options.version, await kindsFor(pool, allowed));
  const draft = instantiateWorkflow(definition, options.input, {
    requester: options.requester,
    idempotencyKey: options.idempotencyKey,
    deadlineAt: options.deadlineAt,
    priority: options.priority,
    concurrencyKey: options.concurrencyKey,
  });
  const outcome = await createWorkflow(pool, { ...draft, traceParent });
  if (!outcome.inputMatches) throw new IdempotencyKeyReusedError();
  const request = await readRequest(pool, outcome.workflowId, null);
  if (!request) throw new Error(`createRequest: workflow ${outcome.workflowId} vanished after it was written`);
  return { created: outcome.created, request };
}
