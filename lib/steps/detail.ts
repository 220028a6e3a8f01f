/**
 * A step's technical record for engineers: every lease term with its own events and the writes
 * refused under it, every attempt (never merged), receipts, late observations, recovery
 * decisions, permits and review cases. Each record stays what it is; nothing here infers one
 * from another (an expiry is not a stopped worker, a revoke is not a cancellation). All of it is
 * read in one snapshot.
 */
import { readStepUndo } from "@/lib/compensation/read";
import type { StaffSnapshot } from "@/lib/db/read-pool-types";
import { readSnapshot, type SnapshotSource } from "@/lib/db/snapshot";
import type { AttemptView, FencingRejectionView, LateObservationView, LeaseTermView, PermitView, ReceiptView, RecoveryDecisionView, ReviewCaseView, StepDetail } from "@/lib/api/contract/engineer/steps";
import type { StoredContract } from "@/lib/engine/contract";
import { run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import { readStepWaitView } from "@/lib/waits/read";
import * as sql from "./sql";

type Row = Record<string, unknown>;

const iso = (value: unknown): string => (value as Date).toISOString();
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value));
const num = (value: unknown): number => Number(value);
const str = (value: unknown): string => value as string;
const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const contractView = (contract: StoredContract | null): StepDetail["step"]["contract"] =>
  contract && {
    idempotencyKeys: contract.idempotencyKeys,
    statusQuery: contract.statusQuery,
    fenceEnforcement: contract.fenceEnforcement,
    repetition: contract.repetition,
    timeoutMs: contract.timeoutMs,
    concurrencyLimit: contract.concurrencyLimit,
  };

function rejection(row: Row): FencingRejectionView {
  return {
    id: num(row.id),
    operation: str(row.operation),
    presentedTerm: num(row.presented_term),
    presentedEpoch: num(row.presented_epoch),
    presentedOwner: str(row.presented_owner),
    currentTerm: row.current_term === null ? null : num(row.current_term),
    currentEpoch: num(row.current_epoch),
    reason: str(row.reason),
    lateObservationId: row.late_observation_id === null ? null : num(row.late_observation_id),
    at: iso(row.at),
  };
}

/**
 * Step `stepId`'s record, read in one snapshot (lib/db/snapshot.ts): the step's state, its
 * attempts, leases, receipts and review cases are of one moment, never a state that no other row
 * agrees with. NotFoundError when there is no such step.
 */
export async function readStepDetail(source: SnapshotSource, stepId: string): Promise<StepDetail> {
  return readSnapshot(source, (db) => readInSnapshot(db, stepId));
}

async function readInSnapshot(db: StaffSnapshot, stepId: string): Promise<StepDetail> {
  const [step] = await run<Row>(db, sql.readStep, [stepId]);
  if (!step) throw new NotFoundError("step", stepId);
  const [wait, [leases, events, attempts, receipts, late, decisions, rejections, permits, reviews], undo] = await Promise.all([
    readStepWaitView(db, stepId),
    Promise.all(
      [
        sql.readLeases,
        sql.readLeaseEvents,
        sql.readAttempts,
        sql.readReceipts,
        sql.readLateObservations,
        sql.readRecoveryDecisions,
        sql.readFencingRejections,
        sql.readPermits,
        sql.readReviewCases,
      ].map((statement) => run<Row>(db, statement, [stepId])),
    ),
    readStepUndo(db, stepId),
  ]);

  const allRejections = rejections!.map(rejection);
  const leaseTerms: LeaseTermView[] = leases!.map((lease) => {
    const term = num(lease.fencing_term);
    const own = events!.filter((event) => num(event.fencing_term) === term);
    return {
      fencingTerm: term,
      epoch: num(lease.epoch),
      ownerSessionId: str(lease.owner_session_id),
      attemptId: str(lease.attempt_id),
      policyVersion: num(lease.policy_version),
      leasedAt: iso(lease.leased_at),
      renewedAt: isoOrNull(lease.renewed_at),
      expiresAt: iso(lease.expires_at),
      checkpointVersion: num(lease.checkpoint_version),
      endedAt: isoOrNull(lease.ended_at),
      endReason: (lease.end_reason ?? null) as LeaseTermView["endReason"],
      renewals: own.filter((event) => event.kind === "renewed").length,
      renewalRefusals: own.filter((event) => event.kind === "renewal_refused").length,
      events: own.map((event) => ({
        id: str(event.id),
        kind: event.kind as LeaseTermView["events"][number]["kind"],
        ownerSessionId: str(event.owner_session_id),
        reason: strOrNull(event.reason),
        expiresAt: isoOrNull(event.expires_at),
        at: iso(event.at),
      })),
      rejections: allRejections.filter((r) => r.presentedTerm === term),
    };
  });

  return {
    dbNow: iso(step.db_now),
    step: {
      id: str(step.id),
      name: str(step.name),
      position: num(step.position),
      adapter: str(step.adapter),
      adapterVersion: str(step.adapter_version),
      contract: contractView(step.contract as StoredContract | null),
      operation: str(step.operation),
      stepClass: str(step.step_class),
      leaseTtlMs: num(step.lease_ttl_ms),
      state: step.state as StepDetail["step"]["state"],
      stateReason: strOrNull(step.state_reason),
      fencingTerm: num(step.fencing_term),
      attemptsStarted: num(step.attempts_started),
      attemptBudget: num(step.attempt_budget),
      nextMode: str(step.next_mode),
      // 'infinity' while queued behind its concurrency key: eligible once one of the key's steps ends.
      nextEligibleAt: step.next_eligible_at === Infinity ? null : iso(step.next_eligible_at),
      priority: num(step.priority),
      concurrencyKey: strOrNull(step.concurrency_key),
      requestIdentity: strOrNull(step.request_identity),
      inputDigest: str(step.input_digest),
      createdAt: iso(step.created_at),
      updatedAt: iso(step.updated_at),
      completedAt: isoOrNull(step.completed_at),
    },
    workflow: {
      id: str(step.workflow_id),
      kind: str(step.workflow_kind),
      version: num(step.workflow_version),
      servedBy: num(step.workflow_served_by),
      status: step.workflow_status as StepDetail["workflow"]["status"],
      statusReason: strOrNull(step.workflow_status_reason),
      requester: str(step.workflow_requester),
      createdAt: iso(step.workflow_created_at),
      deadlineAt: isoOrNull(step.workflow_deadline_at),
      traceParent: strOrNull(step.workflow_trace_parent),
      steps: step.workflow_steps as StepDetail["workflow"]["steps"],
    },
    undo,
    leases: leaseTerms,
    attempts: attempts!.map(
      (a): AttemptView => ({
        id: str(a.id),
        fencingTerm: num(a.fencing_term),
        epoch: num(a.epoch),
        ownerSessionId: str(a.owner_session_id),
        mode: str(a.mode),
        requestIdentity: strOrNull(a.request_identity),
        inputDigest: str(a.input_digest),
        adapterVersion: strOrNull(a.adapter_version),
        checkpoint: a.checkpoint as AttemptView["checkpoint"],
        deadlineAt: iso(a.deadline_at),
        createdAt: iso(a.created_at),
        invocationBeganAt: isoOrNull(a.invocation_began_at),
        responseObservedAt: isoOrNull(a.response_observed_at),
        observedEffect: (a.observed_effect ?? null) as AttemptView["observedEffect"],
        externalReference: strOrNull(a.external_reference),
        observedResult: a.observed_result ?? null,
        outcome: strOrNull(a.outcome),
        outcomeReason: strOrNull(a.outcome_reason),
        endedAt: isoOrNull(a.ended_at),
      }),
    ),
    receipts: receipts!.map(
      (r): ReceiptView => ({
        id: str(r.id),
        attemptId: strOrNull(r.attempt_id),
        inputDigest: str(r.input_digest),
        adapterVersion: strOrNull(r.adapter_version),
        requestIdentity: strOrNull(r.request_identity),
        externalReference: strOrNull(r.external_reference),
        observedResult: r.observed_result ?? null,
        verificationMethod: str(r.verification_method),
        fencingTerm: num(r.fencing_term),
        epoch: num(r.epoch),
        createdAt: iso(r.created_at),
      }),
    ),
    lateObservations: late!.map(
      (o): LateObservationView => ({
        id: num(o.id),
        attemptId: strOrNull(o.attempt_id),
        fencingTerm: num(o.fencing_term),
        epoch: num(o.epoch),
        operation: str(o.operation),
        requestIdentity: strOrNull(o.request_identity),
        externalReference: strOrNull(o.external_reference),
        result: o.result ?? null,
        at: iso(o.at),
      }),
    ),
    recoveryDecisions: decisions!.map(
      (d): RecoveryDecisionView => ({
        id: num(d.id),
        attemptId: str(d.attempt_id),
        fencingTerm: num(d.fencing_term),
        epoch: num(d.epoch),
        trigger: str(d.trigger),
        category: str(d.category),
        evidence: d.evidence,
        observedExpiresAt: iso(d.observed_expires_at),
        decidedAt: iso(d.decided_at),
        decidedBy: str(d.decided_by),
      }),
    ),
    fencingRejections: allRejections,
    permits: permits!.map(
      (p): PermitView => ({
        id: str(p.id),
        adapter: str(p.adapter),
        operationClass: str(p.operation_class),
        attemptId: str(p.attempt_id),
        fencingTerm: num(p.fencing_term),
        requestIdentity: strOrNull(p.request_identity),
        state: p.state as PermitView["state"],
        acquiredAt: iso(p.acquired_at),
        expiresAt: iso(p.expires_at),
        heldUntil: isoOrNull(p.held_until),
        heldReason: strOrNull(p.held_reason),
        releasedAt: isoOrNull(p.released_at),
      }),
    ),
    reviewCases: reviews!.map(
      (c): ReviewCaseView => ({
        id: str(c.id),
        reason: str(c.reason),
        status: c.status as ReviewCaseView["status"],
        assignee: strOrNull(c.assignee),
        reviewBy: iso(c.review_by),
        openedAt: iso(c.opened_at),
        resolution: strOrNull(c.resolution),
        resolvedBy: strOrNull(c.resolved_by),
        resolvedAt: isoOrNull(c.resolved_at),
        resolutionNote: strOrNull(c.resolution_note),
        externalReference: strOrNull(c.external_reference),
      }),
    ),
    wait,
  };
}
