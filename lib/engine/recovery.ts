/**
 * Recovery: what happens after a lease ends without a receipt. Three things end a lease that
 * way: expiry on the database clock (found by the scan), a worker's failure report, and an
 * engineer's revocation. All three read the attempt's durable evidence, record a recovery
 * decision (lib/engine/recovery-rules.ts), and act on it in the same short transaction:
 * make ready, retry with the same identity or key, query the destination, reconcile into a
 * receipt, open a review case, acknowledge, or give up.
 */
import type { Pool, PoolClient } from "pg";
import { contractFromStored, type StoredContract } from "./contract";
import { inTransaction, run } from "./db";
import { AuthorityLostError } from "./errors";
import { recordRejection } from "./rejection";
import { completeSteps } from "./receipt";
import { traceDecisions, type TracedDecision } from "./recovery-trace";
import { decideRecovery, type LateObservationEvidence, type RecoveryDecision } from "./recovery-rules";
import * as sql from "./sql/recovery";
import type { LeaseHandle } from "./types";
import type { AttemptMode, Checkpoint, EffectObservation, RecoveryTrigger, WorkflowStatus } from "./vocabulary";

/** Open review cases are due for a person within this many hours. */
const REVIEW_BY_HOURS = 24;
/** Backoff before a failed attempt runs again: doubles per attempt, capped. */
const RETRY_BACKOFF_BASE_MS = 250;
const RETRY_BACKOFF_MAX_MS = 30_000;

type EvidenceRow = {
  step_id: string;
  fencing_term: string;
  epoch: string;
  attempt_id: string;
  expires_at: Date;
  owner_session_id: string;
  workflow_id: string;
  checkpoint: Checkpoint;
  mode: AttemptMode;
  request_identity: string | null;
  external_reference: string | null;
  observed_result: unknown;
  observed_effect: EffectObservation | null;
  earlier_outcome_unknown: boolean;
  adapter: string;
  adapter_version: string;
  /** Null when no contract is registered for the adapter's name and version. */
  contract: StoredContract | null;
  attempt_budget: number;
  attempts_started: number;
  workflow_status: WorkflowStatus;
  workflow_deadline_passed: boolean;
  undoes_step: boolean;
  receipt_exists: boolean;
  late_observations: LateObservationEvidence[];
};

export type AppliedDecision = {
  readonly stepId: string;
  readonly fencingTerm: bigint;
  readonly trigger: RecoveryTrigger;
  readonly decision: RecoveryDecision;
};

function decide(row: EvidenceRow, trigger: RecoveryTrigger): RecoveryDecision {
  return decideRecovery({
    trigger,
    checkpoint: row.checkpoint,
    mode: row.mode,
    requestIdentity: row.request_identity,
    observedExternalReference: row.checkpoint === "response_observed" ? row.external_reference : null,
    observedEffect: row.observed_effect,
    earlierOutcomeUnknown: row.earlier_outcome_unknown,
    receiptExists: row.receipt_exists,
    lateObservations: row.late_observations,
    adapter: { name: row.adapter, version: row.adapter_version },
    contract: contractFromStored(row.contract),
    attemptsStarted: row.attempts_started,
    attemptBudget: row.attempt_budget,
    workflowStatus: row.workflow_status,
    workflowDeadlinePassed: row.workflow_deadline_passed,
    undoesStep: row.undoes_step,
  });
}

function evidenceSummary(row: EvidenceRow, trigger: RecoveryTrigger) {
  const { contract } = row;
  return {
    trigger,
    checkpoint: row.checkpoint,
    mode: row.mode,
    requestIdentity: row.request_identity,
    externalReference: row.external_reference,
    observedEffect: row.observed_effect,
    earlierOutcomeUnknown: row.earlier_outcome_unknown,
    receiptExists: row.receipt_exists,
    lateObservationIds: row.late_observations.map((o) => o.id),
    adapter: contract
      ? { name: contract.name, version: contract.version, idempotencyKeys: contract.idempotencyKeys, statusQuery: contract.statusQuery,
          fenceEnforcement: contract.fenceEnforcement, repetition: contract.repetition }
      : { name: row.adapter, version: row.adapter_version, contract: "not registered" },
    attemptsStarted: row.attempts_started,
    attemptBudget: row.attempt_budget,
    workflowStatus: row.workflow_status,
    workflowDeadlinePassed: row.workflow_deadline_passed,
  };
}

const backoffMs = (attemptsStarted: number): number =>
  Math.min(RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_BASE_MS * 2 ** Math.max(0, attemptsStarted - 1));

/** Records and carries out decisions for leases this transaction has already ended. */
async function applyDecisions(
  client: PoolClient,
  decided: readonly { row: EvidenceRow; trigger: RecoveryTrigger; decision: RecoveryDecision }[],
  decidedBy: string,
): Promise<AppliedDecision[]> {
  if (decided.length === 0) return [];
  await run(client, sql.recordRecoveryDecisions, [
    decided.map((d) => d.row.step_id),
    decided.map((d) => d.row.attempt_id),
    decided.map((d) => d.row.fencing_term),
    decided.map((d) => d.row.epoch),
    decided.map((d) => d.trigger),
    decided.map((d) => d.decision.category),
    decided.map((d) => JSON.stringify({ ...evidenceSummary(d.row, d.trigger), decision: d.decision })),
    decided.map((d) => d.row.expires_at),
    decided.map(() => decidedBy),
  ]);

  const ready = decided.flatMap((d) =>
    "nextMode" in d.decision ? [{ row: d.row, trigger: d.trigger, nextMode: d.decision.nextMode, category: d.decision.category }] : [],
  );
  if (ready.length > 0) await run(client, sql.makeStepsReady, [
    ready.map((r) => r.row.step_id),
    ready.map((r) => r.row.fencing_term),
    ready.map((r) => r.nextMode),
    ready.map((r) => (r.trigger === "attempt_failed" ? backoffMs(r.row.attempts_started) : 0)),
    ready.map((r) => `recovery: ${r.category.replaceAll("_", " ")}`),
  ]);

  const review = decided.flatMap((d) => (d.decision.category === "review" ? [{ ...d, reason: d.decision.reason }] : []));
  if (review.length > 0) await run(client, sql.openReviewCases, [
    review.map((r) => r.row.step_id),
    review.map((r) => r.row.fencing_term),
    review.map((r) => r.reason),
    review.map((r) => JSON.stringify(evidenceSummary(r.row, r.trigger))),
    REVIEW_BY_HOURS,
  ]);

  const ended = decided.flatMap((d) => (d.decision.category === "give_up" ? [{ row: d.row, decision: d.decision }] : []));
  if (ended.length > 0) await run(client, sql.endSteps, [
    ended.map((e) => e.row.step_id),
    ended.map((e) => e.row.fencing_term),
    ended.map((e) => e.decision.stepState),
    ended.map((e) => e.decision.reason),
  ]);

  const reconciled = decided.flatMap((d) => (d.decision.category === "reconcile" ? [{ row: d.row, decision: d.decision }] : []));
  await completeSteps(
    client,
    reconciled.map(({ row, decision }) => ({
      attemptId: row.attempt_id,
      verification: "direct_response",
      stepState: "completed",
      externalReference: decision.externalReference,
      result: decision.source === "attempt" ? row.observed_result : { reconciledFrom: "late_observation" },
    })),
  );

  return decided.map((d) => ({
    stepId: d.row.step_id,
    fencingTerm: BigInt(d.row.fencing_term),
    trigger: d.trigger,
    decision: d.decision,
  }));
}

export type RecoveryScanOptions = {
  /** Upper bound on leases handled by one scan transaction. */
  readonly batchSize: number;
  /** Who decided, for the record: a worker session id or a tool name. */
  readonly decidedBy: string;
};

/**
 * One bounded pass of the recovery scan. Safe to run from many processes at once: each locks a
 * disjoint batch, and every write re-checks the term it observed.
 */
export async function runRecoveryScan(pool: Pool, options: RecoveryScanOptions): Promise<AppliedDecision[]> {
  const traced: TracedDecision[] = [];
  const applied = await inTransaction(pool, async (client) => {
    const expired = await run<EvidenceRow>(client, sql.lockExpiredLeases, [options.batchSize]);
    if (expired.length === 0) return [];
    const ended = await run<{ step_id: string; fencing_term: string }>(client, sql.endExpiredLeases, [
      expired.map((row) => row.step_id),
      expired.map((row) => row.fencing_term),
    ]);
    const endedKeys = new Set(ended.map((row) => `${row.step_id}:${row.fencing_term}`));
    const decided = expired
      .filter((row) => endedKeys.has(`${row.step_id}:${row.fencing_term}`))
      .map((row) => ({ row, trigger: "lease_expired" as const, decision: decide(row, "lease_expired") }));
    const done = await applyDecisions(client, decided, options.decidedBy);
    traced.length = 0;
    traced.push(...decided.map(tracedOf));
    return done;
  });
  await traceDecisions(pool, traced);
  return applied;
}

const tracedOf = (d: { row: EvidenceRow; trigger: RecoveryTrigger; decision: RecoveryDecision }): TracedDecision => ({
  workflowId: d.row.workflow_id,
  stepId: d.row.step_id,
  fencingTerm: d.row.fencing_term,
  epoch: d.row.epoch,
  checkpoint: d.row.checkpoint,
  expiresAt: d.row.expires_at,
  trigger: d.trigger,
  decision: d.decision,
});

/**
 * A worker reports that its attempt failed: the handler threw, returned nothing, or ran past its
 * deadline. Fenced like every write; recovery then decides from the evidence, so a failure after
 * the invocation began is an unknown outcome, not a licence to run again.
 */
export async function reportFailure(pool: Pool, lease: LeaseHandle, reason: string): Promise<AppliedDecision> {
  const traced: TracedDecision[] = [];
  const outcome = await inTransaction(pool, async (client): Promise<AppliedDecision | AuthorityLostError> => {
    const failed = await run(client, sql.failAttempt, [lease.sessionId, lease.stepId, lease.fencingTerm.toString(), reason]);
    if (failed.length === 0) {
      const rejection = await recordRejection(client, lease, "report_failure", { externalReference: null, result: { failure: reason } });
      if (!rejection) throw new Error(`reportFailure: step ${lease.stepId} refused without a reason`);
      return rejection;
    }
    return decideEndedLease(client, lease.stepId, lease.fencingTerm, "attempt_failed", lease.sessionId, traced);
  });
  if (outcome instanceof AuthorityLostError) throw outcome;
  await traceDecisions(pool, traced);
  return outcome;
}

/**
 * An engineer revokes the current lease of a step. The holder loses authority at once; what
 * happens to the step is still decided from evidence. Returns null when no lease was open.
 */
export async function revokeLease(
  pool: Pool,
  stepId: string,
  reason: string,
  actor: string,
): Promise<AppliedDecision | null> {
  const traced: TracedDecision[] = [];
  const applied = await inTransaction(pool, async (client) => {
    const [revoked] = await run<{ step_id: string; fencing_term: string }>(client, sql.revokeOpenLease, [stepId, reason, actor]);
    if (!revoked) return null;
    return decideEndedLease(client, stepId, BigInt(revoked.fencing_term), "lease_revoked", actor, traced);
  });
  await traceDecisions(pool, traced);
  return applied;
}

async function decideEndedLease(
  client: PoolClient,
  stepId: string,
  fencingTerm: bigint,
  trigger: RecoveryTrigger,
  decidedBy: string,
  traced: TracedDecision[],
): Promise<AppliedDecision> {
  const [row] = await run<EvidenceRow>(client, sql.readLeaseEvidence, [stepId, fencingTerm.toString()]);
  if (!row) throw new Error(`recovery: lease ${stepId}/${fencingTerm} vanished inside its own transaction`);
  const decided = { row, trigger, decision: decide(row, trigger) };
  const [applied] = await applyDecisions(client, [decided], decidedBy);
  // For the spans written once this transaction commits (a retried transaction decides anew).
  traced.length = 0;
  traced.push(tracedOf(decided));
  return applied!;
}
