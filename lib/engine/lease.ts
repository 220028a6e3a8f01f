/**
 * Lease operations: claim, renew, release. A lease answers who may work on a step now; it never
 * answers what happened. The database clock decides every grant, renewal and expiry.
 */
import { run, type Queryable } from "./db";
import { ReleaseRefusedError } from "./errors";
import { recordRejection } from "./rejection";
import * as sql from "./sql/lease";
import { WAIT_RELEASE_PREFIX, type ClaimedStep, type LeaseHandle, type ReleaseOptions, type RenewRequest, type RenewResult, type StepWaits, type WorkflowVersion } from "./types";
import type { AttemptMode, RenewalRefusalReason } from "./vocabulary";

type ClaimRow = {
  step_id: string;
  workflow_id: string;
  kind: string;
  workflow_version: number;
  step_name: string;
  attempt_id: string;
  fencing_term: string;
  epoch: string;
  mode: AttemptMode;
  request_identity: string | null;
  input: unknown;
  /** Dependency name → its receipt's id. */
  dependency_receipts: Record<string, string>;
  input_digest: string;
  adapter: string;
  adapter_version: string;
  operation: string;
  step_class: string;
  attempts_started: number;
  attempt_budget: number;
  lease_ttl_ms: number;
  renew_every_ms: number;
  attempt_deadline_ms: number;
  grace_ms: number;
  deadline_at: Date;
  expires_at: Date;
  checkpoint_version: number;
  db_now: Date;
  trace_parent: string | null;
};

/**
 * Limits up to this are claimed by one statement of their own; larger ones in statements of a
 * multiple of it, so a connection prepares at most a few dozen claim statements.
 */
const CLAIM_STATEMENT_STEP = 64;

/** Claims up to `limit` ready steps of the workflow versions one worker session serves. */
export async function claimSteps(
  db: Queryable,
  sessionId: string,
  served: readonly WorkflowVersion[],
  limit: number,
): Promise<ClaimedStep[]> {
  const rows: ClaimRow[] = [];
  while (rows.length < limit) {
    const wanted = limit - rows.length;
    const batch = wanted <= CLAIM_STATEMENT_STEP ? wanted : wanted - (wanted % CLAIM_STATEMENT_STEP);
    let claimed: ClaimRow[];
    try {
      claimed = await run<ClaimRow>(db, sql.claimReadySteps(batch), [sessionId, served.map((w) => w.kind), served.map((w) => w.version)]);
    } catch (error) {
      // Steps claimed by an earlier statement hold committed leases: hand them out, and let the
      // next claim meet the error.
      if (rows.length > 0) break;
      throw error;
    }
    rows.push(...claimed);
    if (claimed.length < batch) break;
  }
  const [receipts, waits] = await Promise.all([dependencyReceipts(db, rows), waitsOf(db, rows)]);
  return rows.map((row) => ({
    stepId: row.step_id,
    workflowId: row.workflow_id,
    kind: row.kind,
    workflowVersion: row.workflow_version,
    stepName: row.step_name,
    attemptId: row.attempt_id,
    fencingTerm: BigInt(row.fencing_term),
    epoch: BigInt(row.epoch),
    mode: row.mode,
    requestIdentity: row.request_identity,
    input: row.input,
    ...dependenciesOf(row, receipts),
    inputDigest: row.input_digest,
    adapter: row.adapter,
    adapterVersion: row.adapter_version,
    operation: row.operation,
    stepClass: row.step_class,
    attemptsStarted: row.attempts_started,
    attemptBudget: row.attempt_budget,
    leaseTtlMs: row.lease_ttl_ms,
    renewEveryMs: row.renew_every_ms,
    attemptDeadlineMs: row.attempt_deadline_ms,
    graceMs: row.grace_ms,
    deadlineAt: row.deadline_at,
    expiresAt: row.expires_at,
    checkpointVersion: row.checkpoint_version,
    dbNow: row.db_now,
    waits: waits.get(row.step_id) ?? NO_WAITS,
    traceParent: row.trace_parent,
  }));
}

const NO_WAITS: StepWaits = Object.freeze({ count: 0, firstAt: null, lastAt: null });

/**
 * How often each claimed step waited before: one statement, and none when every step is on its
 * first term (a step that never had an attempt never waited).
 */
async function waitsOf(db: Queryable, rows: readonly ClaimRow[]): Promise<Map<string, StepWaits>> {
  const again = rows.filter((row) => BigInt(row.fencing_term) > 1n).map((row) => row.step_id);
  if (again.length === 0) return new Map();
  const counted = await run<{ step_id: string; count: number; first_at: Date; last_at: Date }>(db, sql.stepWaits, [again, WAIT_RELEASE_PREFIX]);
  return new Map(counted.map((row) => [row.step_id, { count: row.count, firstAt: row.first_at, lastAt: row.last_at }]));
}

type DependencyReceipt = { id: string; observed_result: unknown; external_reference: string | null };

const NO_DEPENDENCIES = Object.freeze({ dependencyResults: Object.freeze({}), dependencyReferences: Object.freeze({}) });

/** A claimed step's dependencies' results and external references, by step name. */
function dependenciesOf(row: ClaimRow, receipts: ReadonlyMap<string, DependencyReceipt>): Pick<ClaimedStep, "dependencyResults" | "dependencyReferences"> {
  const named = Object.entries(row.dependency_receipts);
  if (named.length === 0) return NO_DEPENDENCIES;
  return {
    dependencyResults: Object.fromEntries(named.map(([name, id]) => [name, receipts.get(id)?.observed_result ?? null])),
    dependencyReferences: Object.fromEntries(named.map(([name, id]) => [name, receipts.get(id)?.external_reference ?? null])),
  };
}

/** The claimed steps' dependencies' receipts (result and external reference), by id: one statement, none when no step has any. */
async function dependencyReceipts(db: Queryable, rows: readonly ClaimRow[]): Promise<Map<string, DependencyReceipt>> {
  const ids = rows.flatMap((row) => Object.values(row.dependency_receipts));
  if (ids.length === 0) return new Map();
  const receipts = await run<DependencyReceipt>(db, sql.dependencyReceipts, [ids]);
  return new Map(receipts.map((receipt) => [receipt.id, receipt]));
}

type RenewRow =
  | { step_id: string; fencing_term: string; expires_at: Date; reason: null; db_now: Date }
  | { step_id: string; fencing_term: string; expires_at: null; reason: RenewalRefusalReason; db_now: Date };

/**
 * Renews leases held by one session. A refusal is an answer, not an error: the worker must stop
 * crossing effect boundaries for that step.
 */
export async function renewLeases(
  db: Queryable,
  sessionId: string,
  requests: readonly RenewRequest[],
): Promise<RenewResult[]> {
  if (requests.length === 0) return [];
  for (const request of requests) {
    if (request.sessionId !== sessionId) throw new Error("renewLeases: every lease must belong to the session");
  }
  const rows = await run<RenewRow>(db, sql.renewLeases, [
    sessionId,
    requests.map((r) => r.stepId),
    requests.map((r) => r.fencingTerm.toString()),
    requests.map((r) => r.checkpointVersion),
  ]);
  return rows.map((row) =>
    row.reason === null
      ? { stepId: row.step_id, renewed: true, expiresAt: row.expires_at, dbNow: row.db_now }
      : { stepId: row.step_id, renewed: false, reason: row.reason },
  );
}

/**
 * Hands back work whose invocation has not begun (graceful shutdown, waiting for capacity), or
 * whose invocation the destination refused without effect (rate limit). Throws
 * AuthorityLostError when the lease is no longer held, ReleaseRefusedError when the invocation
 * already began and its effect is not known to be absent.
 */
export async function releaseLease(db: Queryable, lease: LeaseHandle, reason: string, options: ReleaseOptions = {}): Promise<void> {
  const rows = await run<{ step_id: string }>(db, sql.releaseLease, [
    lease.sessionId,
    lease.stepId,
    lease.fencingTerm.toString(),
    reason,
    Math.max(0, Math.round(options.delayMs ?? 0)),
    options.effectAbsent ?? false,
  ]);
  if (rows.length === 1) return;
  const rejection = await recordRejection(db, lease, "release", null);
  if (rejection) throw rejection;
  throw new ReleaseRefusedError(lease.stepId, "invocation_began");
}
