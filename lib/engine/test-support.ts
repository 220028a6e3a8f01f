/**
 * Helpers for tests of the engine against a real database: build workflows quickly and move a
 * lease's expiry on the database clock. Used by *.db.test.ts and *.scenario.test.ts only.
 */
import type { Pool } from "pg";
import type { RegisteredAdapter } from "@/lib/definitions/registration";
import type { Queryable } from "./db";
import { registerAdapters } from "./registration";
import type { WorkflowVersion } from "./types";
import { createWorkflows, type StepDraft } from "./workflow";

/**
 * The workflow kind a test step on `adapter` belongs to: one kind per adapter, so a claim can
 * target one adapter's steps by the kind it serves.
 */
export const testKindOf = (adapter: string): string => `test-${adapter}`;

/** What a session serves to claim the test steps on these adapters. */
export const servedFor = (...adapters: string[]): WorkflowVersion[] => adapters.map((adapter) => ({ kind: testKindOf(adapter), version: 1 }));

const contract = (name: string, flags: Pick<RegisteredAdapter, "idempotencyKeys" | "statusQuery" | "fenceEnforcement" | "repetition">): RegisteredAdapter => ({
  name,
  version: "1",
  ...flags,
  timeoutMs: 5_000,
  concurrencyLimit: 8,
  rate: null,
  epochAdminUrl: null,
  review: null,
});

/** One contract of each kind of destination, under the adapter names the engine tests use. */
export const TEST_CONTRACTS = {
  fenced: contract("fenced", { idempotencyKeys: false, statusQuery: false, fenceEnforcement: true, repetition: "idempotency_protected" }),
  idempotent: contract("idempotent", { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" }),
  queryable: contract("queryable", { idempotencyKeys: false, statusQuery: true, fenceEnforcement: false, repetition: "reconcilable" }),
  opaque: contract("opaque", { idempotencyKeys: false, statusQuery: false, fenceEnforcement: false, repetition: "prohibited" }),
} as const;

/** Registers contracts as a worker's registration would (the four test contracts by default). */
export async function registerTestContracts(db: Queryable, adapters: readonly RegisteredAdapter[] = Object.values(TEST_CONTRACTS)): Promise<void> {
  await registerAdapters(db, adapters);
}

/** A step class with a short lease, so tests that wait for expiry stay fast. */
export async function createStepClass(
  db: Queryable,
  name: string,
  policy: { leaseTtlMs: number; renewEveryMs: number; attemptDeadlineMs: number; graceMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO step_class (name, lease_ttl_ms, renew_every_ms, attempt_deadline_ms, grace_ms) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (name) DO UPDATE SET lease_ttl_ms = $2, renew_every_ms = $3, attempt_deadline_ms = $4, grace_ms = $5`,
    [name, policy.leaseTtlMs, policy.renewEveryMs, policy.attemptDeadlineMs, policy.graceMs],
  );
}

/**
 * Creates `count` workflows of one step each, of kind testKindOf(step.adapter), with `input` as
 * every request's input (`{ n }` by default); returns their step ids.
 */
export async function createSingleStepWorkflows(pool: Pool, count: number, { input, ...step }: Omit<StepDraft, "name"> & { input?: unknown }): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; offset < count; offset += 500) {
    const size = Math.min(500, count - offset);
    const created = await createWorkflows(
      pool,
      Array.from({ length: size }, (_, i) => ({
        kind: testKindOf(step.adapter),
        input: input === undefined ? { n: offset + i } : input,
        requester: "test",
        steps: [{ name: "only", ...step }],
      })),
    );
    for (const workflow of created) ids.push(workflow.stepIds.get("only")!);
  }
  return ids;
}

/** Moves the open lease of a step so that it expires `offsetMs` from now on the database clock. */
export async function setLeaseExpiry(db: Queryable, stepId: string, offsetMs: number): Promise<void> {
  const result = await db.query(
    `UPDATE lease SET leased_at = least(leased_at, now() + $2 * interval '1 millisecond' - interval '1 hour'),
                      expires_at = now() + $2 * interval '1 millisecond'
     WHERE step_id = $1 AND ended_at IS NULL`,
    [stepId, offsetMs],
  );
  if (result.rowCount !== 1) throw new Error(`setLeaseExpiry: step ${stepId} has no open lease`);
}

export async function stepState(db: Queryable, stepId: string): Promise<string> {
  const { rows } = await db.query<{ state: string }>("SELECT state FROM step WHERE id = $1", [stepId]);
  return rows[0]!.state;
}

/**
 * Empties every engine table (TRUNCATE fires no row triggers), for tests that share a file's
 * database. Destinations' rates go too (registering an adapter declares its rate again).
 */
export async function truncateEngineTables(db: Queryable): Promise<void> {
  await db.query(
    `TRUNCATE workflow, step, step_dependency, attempt, lease_event, receipt, receipt_step, late_observation,
              fencing_rejection, recovery_decision, review_case, worker_session, worker_session_definition,
              adapter_permit, adapter_capacity, concurrency_key, concurrency_slot, adapter_rate, adapter_call_slot, timer, event_wait, event,
              compensation, compensation_run, child_request, child_wait`,
  );
}
