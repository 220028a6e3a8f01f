/**
 * One request as its page shows it: the request, each step with every attempt (never merged),
 * the marks of evidence on them (checkpoints, late observations, fencing rejections, recovery
 * decisions), receipts with how they were verified, waits (each room's, in its words), review
 * cases with their owner, and what the customer sees. Eight statements and one per wait room
 * whatever the request's size, in one snapshot: the
 * evidence tables are read by the request's step ids at once. Reads take the primary's pool or a
 * ReadPool (a replica when named), or a snapshot already open.
 *
 * Parent/children links are not read here yet: lib/children exposes them, and the page has a
 * section waiting for them (components/engineer/request-page.tsx, "Parent and children").
 */
import type { StaffReadable, StaffSnapshot } from "@/lib/db/read-pool-types";
import { readSnapshot, type SnapshotSource } from "@/lib/db/snapshot";
import { run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { readStepWaits, readWaitLines } from "@/lib/waits/read";
import * as sql from "./sql";
import type { AttemptBar, BoundedJson, DecisionMark, LateObservationMark, RejectionMark, RequestPageData, StepLine, WebhookEventLine } from "./types";

type Row = Record<string, unknown>;

/** How much of the input and of each step's result the page reads unless asked for all. */
export const PREVIEW_CHARS = 2_000;
/** "Show all" still stops somewhere: a result is at most this long on the page. */
export const FULL_CHARS = 1_000_000;
/** At most this many webhook events are listed for one request. */
export const MAX_WEBHOOK_EVENTS = 200;

const iso = (value: unknown): string => (value as Date).toISOString();
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value));
const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const bounded = (text: unknown, chars: unknown): BoundedJson | null =>
  text === null || text === undefined ? null : { text: String(text), chars: Number(chars), truncated: String(text).length < Number(chars) };

function groupBy<T>(rows: readonly Row[], map: (row: Row) => T): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const key = String(row.step_id);
    const group = groups.get(key);
    if (group) group.push(map(row));
    else groups.set(key, [map(row)]);
  }
  return groups;
}

const attemptOf = (a: Row): AttemptBar => ({
  id: String(a.id),
  fencingTerm: Number(a.fencing_term),
  epoch: Number(a.epoch),
  ownerSessionId: String(a.owner_session_id),
  mode: a.mode as AttemptBar["mode"],
  checkpoint: a.checkpoint as AttemptBar["checkpoint"],
  startedAt: iso(a.created_at),
  invocationBeganAt: isoOrNull(a.invocation_began_at),
  responseObservedAt: isoOrNull(a.response_observed_at),
  observedEffect: (a.observed_effect ?? null) as AttemptBar["observedEffect"],
  endedAt: isoOrNull(a.ended_at),
  expiresAt: iso(a.expires_at),
  outcome: (a.outcome ?? null) as AttemptBar["outcome"],
  outcomeReason: strOrNull(a.outcome_reason),
  endReason: (a.end_reason ?? null) as AttemptBar["endReason"],
  externalReference: strOrNull(a.external_reference),
});

export type ReadRequestPageOptions = {
  /** Read the input and results up to FULL_CHARS instead of PREVIEW_CHARS. */
  readonly full?: boolean;
};

/**
 * Request `id` as its page shows it, read in one snapshot (lib/db/snapshot.ts): every step's
 * state, attempts, receipt and wait are of the same moment. NotFoundError when there is none.
 */
export async function readRequestPage(source: SnapshotSource, id: string, options: ReadRequestPageOptions = {}): Promise<RequestPageData> {
  return readSnapshot(source, (db) => readInSnapshot(db, id, options));
}

async function readInSnapshot(db: StaffSnapshot, id: string, options: ReadRequestPageOptions): Promise<RequestPageData> {
  const chars = options.full ? FULL_CHARS : PREVIEW_CHARS;
  const [head] = await run<Row>(db, sql.readRequestHead, [id, chars]);
  if (!head) throw new NotFoundError("request", id);
  const stepRows = await run<Row>(db, sql.readRequestSteps, [id, chars]);
  const stepIds = stepRows.map((row) => String(row.id));
  const [attempts, late, rejections, decisions, reviews, waits, waitLines, projection] = await Promise.all([
    run<Row>(db, sql.readRequestAttempts, [stepIds]),
    run<Row>(db, sql.readRequestLateObservations, [stepIds]),
    run<Row>(db, sql.readRequestRejections, [stepIds]),
    run<Row>(db, sql.readRequestDecisions, [stepIds]),
    run<Row>(db, sql.readRequestReviewCases, [id]),
    readStepWaits(db, stepIds),
    readWaitLines(db, id),
    trackingViewByWorkflowId(db, id),
  ]);
  const attemptsOf = groupBy(attempts, attemptOf);
  const lateOf = groupBy(late, (o): LateObservationMark => ({
    id: Number(o.id),
    fencingTerm: Number(o.fencing_term),
    operation: String(o.operation),
    externalReference: strOrNull(o.external_reference),
    at: iso(o.at),
  }));
  const rejectionsOf = groupBy(rejections, (f): RejectionMark => ({
    id: Number(f.id),
    operation: String(f.operation),
    presentedTerm: Number(f.presented_term),
    currentTerm: f.current_term === null ? null : Number(f.current_term),
    reason: f.reason as RejectionMark["reason"],
    at: iso(f.at),
  }));
  const decisionsOf = groupBy(decisions, (d): DecisionMark => ({
    id: Number(d.id),
    fencingTerm: Number(d.fencing_term),
    trigger: d.trigger as DecisionMark["trigger"],
    category: d.category as DecisionMark["category"],
    reason: strOrNull(d.reason),
    checkpoint: strOrNull(d.checkpoint),
    decidedAt: iso(d.decided_at),
    decidedBy: String(d.decided_by),
  }));

  const steps = stepRows.map((s): StepLine => {
    const stepId = String(s.id);
    return {
      id: stepId,
      name: String(s.name),
      position: Number(s.position),
      adapter: String(s.adapter),
      operation: String(s.operation),
      stepClass: String(s.step_class),
      state: s.state as StepLine["state"],
      stateReason: strOrNull(s.state_reason),
      fencingTerm: Number(s.fencing_term),
      attemptsStarted: Number(s.attempts_started),
      attemptBudget: Number(s.attempt_budget),
      requestIdentity: strOrNull(s.request_identity),
      dependsOn: s.depends_on as string[],
      createdAt: iso(s.created_at),
      completedAt: isoOrNull(s.completed_at),
      receipt:
        s.receipt_id === null
          ? null
          : {
              id: String(s.receipt_id),
              attemptId: strOrNull(s.receipt_attempt_id),
              verificationMethod: s.verification_method as NonNullable<StepLine["receipt"]>["verificationMethod"],
              externalReference: strOrNull(s.receipt_reference),
              fencingTerm: Number(s.receipt_term),
              epoch: Number(s.receipt_epoch),
              at: iso(s.receipt_at),
            },
      result: bounded(s.result_text, s.result_chars),
      wait: waits.get(stepId) ?? null,
      attempts: attemptsOf.get(stepId) ?? [],
      lateObservations: lateOf.get(stepId) ?? [],
      fencingRejections: rejectionsOf.get(stepId) ?? [],
      recoveryDecisions: decisionsOf.get(stepId) ?? [],
    };
  });

  return {
    dbNow: iso(head.db_now),
    version: String(head.version_tag),
    request: {
      id: String(head.id),
      kind: String(head.kind),
      kindVersion: Number(head.version),
      status: head.status as RequestPageData["request"]["status"],
      statusReason: strOrNull(head.status_reason),
      requester: String(head.requester),
      idempotencyKey: strOrNull(head.idempotency_key),
      trackingToken: String(head.tracking_token),
      createdAt: iso(head.created_at),
      updatedAt: iso(head.updated_at),
      deadlineAt: isoOrNull(head.deadline_at),
      priority: Number(head.priority),
      concurrencyKey: strOrNull(head.concurrency_key),
      inputDigest: String(head.input_digest),
      input: bounded(head.input_text, head.input_chars)!,
    },
    projection,
    steps,
    waits: waitLines,
    reviewCases: reviews.map((c) => ({
      id: String(c.id),
      stepId: String(c.step_id),
      reason: String(c.reason),
      status: c.status as RequestPageData["reviewCases"][number]["status"],
      assignee: strOrNull(c.assignee),
      openedAt: iso(c.opened_at),
      reviewBy: iso(c.review_by),
      resolution: strOrNull(c.resolution),
      resolvedBy: strOrNull(c.resolved_by),
      resolvedAt: isoOrNull(c.resolved_at),
      externalReference: strOrNull(c.external_reference),
    })),
  };
}

/** The webhook events request `id` produced and their deliveries (a scan of the outbox: read on demand). */
export async function readRequestWebhooks(db: StaffReadable, id: string): Promise<WebhookEventLine[]> {
  const rows = await run<Row>(db, sql.readRequestWebhooks, [id, MAX_WEBHOOK_EVENTS]);
  return rows.map((e) => ({
    id: String(e.id),
    type: String(e.type),
    createdAt: iso(e.created_at),
    preparedAt: isoOrNull(e.prepared_at),
    deliveries: (e.deliveries as Record<string, unknown>[]).map((d) => ({
      id: String(d.id),
      endpointId: String(d.endpointId),
      url: String(d.url),
      state: String(d.state),
      attempts: Number(d.attempts),
      lastStatus: d.lastStatus === null ? null : Number(d.lastStatus),
      lastError: strOrNull(d.lastError),
      deliveredAt: d.deliveredAt === null ? null : new Date(String(d.deliveredAt)).toISOString(),
      nextAttemptAt: new Date(String(d.nextAttemptAt)).toISOString(),
    })),
  }));
}
