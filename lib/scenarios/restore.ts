/**
 * The restore drill: a database restored from a snapshot hands out fencing terms it already
 * handed out, so a worker from before the restore can hold a term *newer* than the one the
 * restored coordinator gives its replacement. Only the fenced destination stands between that
 * stale worker and an effect, and only if it knows the epoch moved on.
 *
 *   1. snapshot the engine's tables;
 *   2. traffic: the step's first lease expires, a second worker takes term 2, begins its
 *      invocation and stalls before calling the destination (the stale worker to be);
 *   3. restore the snapshot: the step is back at term 0;
 *   4. (with transition) run an epoch transition, which installs epoch 2 at the destination;
 *   5. a new worker claims the step — term 1 again — and completes it at the destination;
 *   6. the stale worker acts: it sends its term-2 write to the destination, and tries to record
 *      the answer in the engine.
 *
 * Without the transition the destination accepts the stale write (term 2 > term 1 in the same
 * epoch): the hazard is real. With it, the write carries epoch 1 < 2 and is refused. The engine
 * refuses the stale worker's own writes either way (its lease is not in the restored database).
 */
import type { Pool } from "pg";
import { StaleTermRejected } from "@/lib/adapters/call-outcome";
import { demoAdapters } from "@/lib/demo/adapters";
import { httpEpochDestination } from "@/lib/engine/epoch-admin";
import { beginInvocation, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { runEpochTransition } from "@/lib/engine/epoch";
import { AuthorityLostError } from "@/lib/engine/errors";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { createStepClass, setLeaseExpiry } from "@/lib/engine/test-support";
import type { ClaimedStep, LeaseHandle } from "@/lib/engine/types";
import { createWorkflow } from "@/lib/engine/workflow";

/** Every engine table, in an order that satisfies foreign keys on the way back in. */
const ENGINE_TABLES = [
  "epoch",
  "epoch_transition",
  "destination_block",
  "step_class",
  "adapter_definition",
  "workflow_definition",
  "worker_session",
  "worker_session_definition",
  "workflow",
  "step",
  "step_dependency",
  "attempt",
  "lease_event",
  "receipt",
  "late_observation",
  "fencing_rejection",
  "recovery_decision",
  "review_case",
  "adapter_capacity",
  "adapter_permit",
  "adapter_rate",
  "adapter_call_slot",
  "concurrency_key",
  "concurrency_slot",
  "receipt_step",
  "timer",
  "event",
  "event_wait",
  "child_wait",
  "child_request",
  "compensation_run",
  "compensation",
  "schedule",
  "schedule_firing",
  "bulk_action",
  "bulk_action_item",
] as const;

const SNAPSHOT_SCHEMA = "restore_drill_snapshot";

/** A point-in-time copy of the engine's tables, kept in the same database. */
export async function takeSnapshot(pool: Pool): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${SNAPSHOT_SCHEMA} CASCADE; CREATE SCHEMA ${SNAPSHOT_SCHEMA}`);
  for (const table of ENGINE_TABLES) await pool.query(`CREATE TABLE ${SNAPSHOT_SCHEMA}.${table} AS TABLE ${table}`);
}

/** Puts the snapshot back, as a restore from backup would: every row, every term, every epoch. */
export async function restoreSnapshot(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // TRUNCATE fires no row triggers: the append-only guards stay in place for everyone else.
    await client.query(`TRUNCATE ${ENGINE_TABLES.join(", ")}`);
    for (const table of ENGINE_TABLES) {
      await client.query(`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM ${SNAPSHOT_SCHEMA}.${table}`);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export type DrillOutcome = {
  readonly withTransition: boolean;
  /** The replacement's write under the restored coordinator's term reached the destination. */
  readonly replacementAccepted: boolean;
  /** The stale worker's write was accepted by the fenced destination (the hazard). */
  readonly staleWriteAcceptedAtDestination: boolean;
  /** The stale worker's attempt to record the answer in the engine was refused. */
  readonly staleEngineWriteRefused: boolean;
  readonly staleTerm: { epoch: string; term: string };
  readonly replacementTerm: { epoch: string; term: string };
  readonly epochAfter: string;
};

const DRILL_CLASS = "restore-drill";

export async function runRestoreDrill(pool: Pool, destinationUrl: string, options: { withTransition: boolean; label: string }): Promise<DrillOutcome> {
  await createStepClass(pool, DRILL_CLASS, { leaseTtlMs: 60_000, renewEveryMs: 20_000, attemptDeadlineMs: 120_000, graceMs: 1_000 });
  const created = await createWorkflow(pool, {
    kind: "restore-drill",
    input: { label: options.label },
    requester: "restore-drill",
    steps: [{ name: "reserve", adapter: "fenced", stepClass: DRILL_CLASS }],
  });
  const stepId = created.stepIds.get("reserve")!;
  const claim = async (): Promise<{ step: ClaimedStep; lease: LeaseHandle }> => {
    const session = await registerSession(pool, "direct");
    const [step] = await claimSteps(pool, session, [{ kind: "restore-drill", version: 1 }], 1);
    if (!step || step.stepId !== stepId) throw new Error(`restore drill: could not claim step ${stepId}`);
    return { step, lease: { stepId, fencingTerm: step.fencingTerm, sessionId: session } };
  };
  const { fenced } = demoAdapters(destinationUrl);
  const send = async (step: ClaimedStep, requestIdentity: string) => {
    const answer = await fenced.invoke({
      payload: { payload: { seat: options.label }, resource: stepId },
      requestIdentity,
      epoch: step.epoch,
      fencingTerm: step.fencingTerm,
      signal: AbortSignal.timeout(5_000),
      timeoutMs: 5_000,
    });
    return { externalReference: answer.externalReference, result: answer.result ?? null };
  };

  await takeSnapshot(pool);

  // Traffic after the snapshot: term 1 expires and is recovered; term 2 stalls mid-invocation.
  await claim();
  await setLeaseExpiry(pool, stepId, -1);
  await runRecoveryScan(pool, { decidedBy: "restore-drill", batchSize: 10 });
  const stale = await claim();
  const staleIdentity = (await persistRequestIdentity(pool, stale.lease, `fl-${stepId}`, "1")).requestIdentity;
  await beginInvocation(pool, stale.lease);

  await restoreSnapshot(pool);
  if (options.withTransition) {
    await runEpochTransition(pool, { reason: "restore drill", requestedBy: "restore-drill", destinations: [httpEpochDestination(fenced.name, fenced.epochAdminUrl!)], drainTimeoutMs: 0 });
  }

  const replacement = await claim();
  const identity = (await persistRequestIdentity(pool, replacement.lease, `fl-${stepId}`, "1")).requestIdentity;
  await beginInvocation(pool, replacement.lease);
  const answer = await send(replacement.step, identity);
  await observeResponse(pool, replacement.lease, answer.externalReference, answer.result);
  const [receipt] = await commitReceipts(pool, replacement.lease.sessionId, [
    { lease: replacement.lease, conclusion: { kind: "effect", externalReference: answer.externalReference, result: answer.result, verification: "direct_response" } },
  ]);

  let staleWriteAcceptedAtDestination: boolean;
  let staleAnswer: { externalReference: string | null; result: unknown } | null = null;
  try {
    staleAnswer = await send(stale.step, staleIdentity);
    staleWriteAcceptedAtDestination = true;
  } catch (error) {
    if (!(error instanceof StaleTermRejected)) throw error;
    staleWriteAcceptedAtDestination = false;
  }
  let staleEngineWriteRefused = false;
  try {
    await observeResponse(pool, stale.lease, staleAnswer?.externalReference ?? null, staleAnswer?.result ?? { refused: true });
  } catch (error) {
    if (!(error instanceof AuthorityLostError)) throw error;
    staleEngineWriteRefused = true;
  }

  const { rows } = await pool.query<{ epoch: string }>("SELECT fl_current_epoch()::text AS epoch");
  return {
    withTransition: options.withTransition,
    replacementAccepted: receipt?.committed === true,
    staleWriteAcceptedAtDestination,
    staleEngineWriteRefused,
    staleTerm: { epoch: stale.step.epoch.toString(), term: stale.step.fencingTerm.toString() },
    replacementTerm: { epoch: replacement.step.epoch.toString(), term: replacement.step.fencingTerm.toString() },
    epochAfter: rows[0]!.epoch,
  };
}
