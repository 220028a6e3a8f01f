/**
 * Invariant 2, statement by statement: the authority guard (lib/engine/sql/authority.ts) in every
 * fenced statement. Each cell presents one statement with a lease that lost authority for one
 * cause, and expects the refusal with that cause as its reason, and no write but the refusal's
 * own record: a fencing rejection and its late observation, or for a renewal its
 * `renewal_refused` event. Every table of the engine is compared before and after.
 *
 * A cell's fixture is built by the engine's own operations: session A claims the target step and
 * a bystander step in one claim, so both hold term 1 under A, and moves both to the checkpoint
 * the statement expects. The bystander catches a guard that lost its step clause (the write would
 * land on A's other lease); the control column shows the fixture's write is accepted while the
 * lease holds authority, so each refusal is the cause's doing.
 */
import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, observeEffectAbsent, observeResponse, persistRequestIdentity } from "./checkpoint";
import { AuthorityLostError, CheckpointOrderError, ReleaseRefusedError } from "./errors";
import { claimSteps, releaseLease, renewLeases } from "./lease";
import { acquirePermit } from "./permit";
import { commitReceipts } from "./receipt";
import { reportFailure, revokeLease, runRecoveryScan } from "./recovery";
import { registerSession } from "./session";
import { setLeaseExpiry } from "./test-support";
import type { LeaseHandle } from "./types";
import type { Checkpoint, RejectionReason, RenewalRefusalReason } from "./vocabulary";
import { cancelWorkflow, createWorkflows } from "./workflow";

type Outcome =
  | { readonly code: "accepted" }
  | { readonly code: "authority_lost"; readonly operation: string; readonly reason: RejectionReason }
  | { readonly code: "renewal_refused"; readonly reason: RenewalRefusalReason }
  | { readonly code: "checkpoint_order" | "release_refused" };

type Statement = {
  readonly name: string;
  /** The operation its fencing rejections name; a renewal records no rejection. */
  readonly operation: string | null;
  /** The checkpoint the statement accepts a write at. */
  readonly at: Checkpoint;
  /** A checkpoint the statement refuses to write at, or why checkpoint order does not apply to it. */
  readonly outOfOrder: { readonly at: Checkpoint; readonly refusal: Outcome } | { readonly notApplicable: string };
  readonly run: (pool: Pool, lease: LeaseHandle) => Promise<Outcome>;
};

/** Runs a fenced write, naming how it ended. */
async function outcomeOf(write: () => Promise<unknown>): Promise<Outcome> {
  try {
    await write();
    return { code: "accepted" };
  } catch (error) {
    if (error instanceof AuthorityLostError) return { code: "authority_lost", operation: error.operation, reason: error.reason };
    if (error instanceof CheckpointOrderError || error instanceof ReleaseRefusedError) return { code: error.code };
    throw error;
  }
}

const checkpointVersionOf = async (pool: Pool, lease: LeaseHandle): Promise<number> =>
  (await pool.query<{ v: number }>("SELECT checkpoint_version AS v FROM lease WHERE step_id = $1 AND fencing_term = $2", [lease.stepId, lease.fencingTerm.toString()])).rows[0]?.v ?? 1;

/** A renewal that presents the lease's checkpoint version, less `behind`. */
async function renew(pool: Pool, lease: LeaseHandle, behind = 0): Promise<Outcome> {
  const [result] = await renewLeases(pool, lease.sessionId, [{ ...lease, checkpointVersion: (await checkpointVersionOf(pool, lease)) - behind }]);
  if (!result) throw new Error("renewLeases answered nothing for the lease");
  return result.renewed ? { code: "accepted" } : { code: "renewal_refused", reason: result.reason };
}

const STATEMENTS: readonly Statement[] = [
  {
    name: "persist request identity",
    operation: "persist_request_identity",
    at: "created",
    outOfOrder: { at: "identity_persisted", refusal: { code: "checkpoint_order" } },
    run: (pool, lease) => outcomeOf(() => persistRequestIdentity(pool, lease, "fl-matrix", "1")),
  },
  {
    name: "begin invocation",
    operation: "begin_invocation",
    at: "identity_persisted",
    outOfOrder: { at: "created", refusal: { code: "checkpoint_order" } },
    run: (pool, lease) => outcomeOf(() => beginInvocation(pool, lease)),
  },
  {
    name: "observe response",
    operation: "observe_response",
    at: "invocation_began",
    outOfOrder: { at: "identity_persisted", refusal: { code: "checkpoint_order" } },
    run: (pool, lease) => outcomeOf(() => observeResponse(pool, lease, "ext-matrix", { delivered: true })),
  },
  {
    name: "observe effect absent",
    operation: "observe_effect_absent",
    at: "identity_persisted",
    outOfOrder: { at: "created", refusal: { code: "checkpoint_order" } },
    run: (pool, lease) => outcomeOf(() => observeEffectAbsent(pool, lease, { applied: false })),
  },
  {
    name: "commit receipt",
    operation: "commit_receipt",
    at: "created",
    outOfOrder: { notApplicable: "a receipt may conclude an attempt at any checkpoint (a pure step, or nothing to do)" },
    run: async (pool, lease) => {
      const [result] = await commitReceipts(pool, lease.sessionId, [
        { lease, conclusion: { kind: "effect", externalReference: "ext-matrix", result: { delivered: true }, verification: "direct_response" } },
      ]);
      if (!result) throw new Error("commitReceipts answered nothing for the lease");
      return result.committed ? { code: "accepted" } : { code: "authority_lost", operation: result.error.operation, reason: result.error.reason };
    },
  },
  {
    name: "renew",
    operation: null,
    // At the first checkpoint a superseded term presents the same checkpoint version as the term
    // that replaced it, so only the term clause tells the two leases apart.
    at: "created",
    // A renewal does not move the attempt: its order check is the checkpoint version it presents.
    outOfOrder: { at: "created", refusal: { code: "renewal_refused", reason: "checkpoint_version_mismatch" } },
    run: (pool, lease) => renew(pool, lease),
  },
  {
    name: "release",
    operation: "release",
    at: "identity_persisted",
    outOfOrder: { at: "invocation_began", refusal: { code: "release_refused" } },
    run: (pool, lease) => outcomeOf(() => releaseLease(pool, lease, "matrix")),
  },
  {
    name: "acquire permit",
    operation: "acquire_permit",
    at: "identity_persisted",
    outOfOrder: { notApplicable: "a permit is not tied to a checkpoint; the worker takes it after the identity checkpoint" },
    run: (pool, lease) =>
      outcomeOf(() => acquirePermit(pool, lease, { adapter: `matrix-${lease.stepId}`, operationClass: "create", limit: 5, ttlMs: 5_000, requestIdentity: "fl-matrix" })),
  },
  {
    name: "report failure",
    operation: "report_failure",
    at: "identity_persisted",
    outOfOrder: { notApplicable: "a failure may be reported at any checkpoint" },
    run: (pool, lease) => outcomeOf(() => reportFailure(pool, lease, "matrix")),
  },
];

/** The refusal causes the guard names, each as a change to the target's lease and the lease presented. */
const CAUSES: readonly { readonly reason: RejectionReason; readonly apply: (pool: Pool, world: World) => Promise<LeaseHandle> }[] = [
  // Set up in `world`: the target's term 1 expired and A claimed the step again, as term 2.
  { reason: "superseded", apply: async (_pool, world) => world.target },
  { reason: "not_owner", apply: async (pool, world) => ({ ...world.target, sessionId: await registerSession(pool, "direct") }) },
  {
    reason: "expired",
    apply: async (pool, world) => {
      await setLeaseExpiry(pool, world.target.stepId, -1);
      return world.target;
    },
  },
  {
    reason: "revoked",
    apply: async (pool, world) => {
      await revokeLease(pool, world.target.stepId, "authority matrix", "test");
      return world.target;
    },
  },
  {
    reason: "lease_ended",
    apply: async (pool, world) => {
      await reportFailure(pool, world.target, "ended before the write");
      return world.target;
    },
  },
  {
    reason: "epoch_stale",
    apply: async (pool, world) => {
      await pool.query("INSERT INTO epoch (id, reason) SELECT max(id) + 1, 'authority matrix' FROM epoch");
      return world.target;
    },
  },
  {
    reason: "workflow_inactive",
    apply: async (pool, world) => {
      await cancelWorkflow(pool, world.targetWorkflowId, "authority matrix");
      return world.target;
    },
  },
];

type World = { readonly target: LeaseHandle; readonly targetWorkflowId: string; readonly bystander: LeaseHandle };

/** Moves an attempt through the checkpoints up to `to`, as its worker would. */
async function advance(pool: Pool, lease: LeaseHandle, to: Checkpoint): Promise<void> {
  const order: Checkpoint[] = ["created", "identity_persisted", "invocation_began"];
  if (!order.includes(to)) throw new Error(`advance: no fixture reaches ${to}`);
  if (order.indexOf(to) >= 1) await persistRequestIdentity(pool, lease, `fl-${lease.stepId}`, "1");
  if (order.indexOf(to) >= 2) await beginInvocation(pool, lease);
}

let cells = 0;

/**
 * Session A holds the target and the bystander under term 1, both at `targetAt`/`bystanderAt`.
 * For `superseded`, the target's term 1 expired, was recovered, and A holds the step again as
 * term 2 (at `targetAt`); term 1 is what is then presented.
 */
async function buildWorld(pool: Pool, targetAt: Checkpoint, bystanderAt: Checkpoint, superseded: boolean): Promise<World> {
  cells += 1;
  // An adapter and kind of its own, so this cell claims only its own steps.
  const adapter = `matrix-${cells}`;
  const served = [{ kind: adapter, version: 1 }];
  const step = { name: "only", adapter, operation: "write", stepClass: "pure" };
  const [target, bystander] = await createWorkflows(pool, [
    { kind: adapter, input: { cell: cells, role: "target" }, requester: "test", steps: [step] },
    { kind: adapter, input: { cell: cells, role: "bystander" }, requester: "test", steps: [step] },
  ]);
  const session = await registerSession(pool, "direct");
  const claimed = await claimSteps(pool, session, served, 2);
  expect(claimed.map((c) => c.fencingTerm)).toEqual([1n, 1n]);
  const leaseOf = (stepId: string): LeaseHandle => ({ stepId, fencingTerm: 1n, sessionId: session });
  const world = { target: leaseOf(target!.stepIds.get("only")!), targetWorkflowId: target!.workflowId, bystander: leaseOf(bystander!.stepIds.get("only")!) };
  await advance(pool, world.bystander, bystanderAt);
  if (!superseded) {
    await advance(pool, world.target, targetAt);
    return world;
  }
  await setLeaseExpiry(pool, world.target.stepId, -1);
  // Earlier cells leave expired leases too: a batch large enough to reach this one.
  await runRecoveryScan(pool, { batchSize: 1_000, decidedBy: "test" });
  const [again] = await claimSteps(pool, session, served, 1);
  expect(again).toMatchObject({ stepId: world.target.stepId, fencingTerm: 2n });
  await advance(pool, { ...world.target, fencingTerm: 2n }, targetAt);
  return world;
}

type Snapshot = Record<string, string[]>;

/** Every row of every engine table, as JSON text. */
async function snapshot(pool: Pool): Promise<Snapshot> {
  const { rows: tables } = await pool.query<{ name: string }>(
    // Partitioned tables once each, by their own name: a partition's rows are its parent's.
    `SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')
       AND NOT relispartition AND relname <> '_prisma_migrations' ORDER BY 1`,
  );
  const result: Snapshot = {};
  for (const { name } of tables) {
    const { rows } = await pool.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${name} t`);
    result[name] = rows.map((r) => r.row).sort();
  }
  return result;
}

/** Rows that appeared, per table; throws on any row that changed or vanished. */
function added(before: Snapshot, after: Snapshot): Record<string, Record<string, unknown>[]> {
  const changes: Record<string, Record<string, unknown>[]> = {};
  for (const table of Object.keys(after)) {
    const old = new Set(before[table]);
    const now = new Set(after[table]);
    const gone = [...old].filter((row) => !now.has(row));
    if (gone.length > 0) throw new Error(`${table}: rows changed or removed by a refused write: ${gone.join("\n")}`);
    const fresh = [...now].filter((row) => !old.has(row)).map((row) => JSON.parse(row) as Record<string, unknown>);
    if (fresh.length > 0) changes[table] = fresh;
  }
  return changes;
}

/** What a refusal may write: its own record, and nothing else. */
function expectOnlyTheRecord(changes: Record<string, Record<string, unknown>[]>, presented: LeaseHandle, outcome: Outcome): void {
  if (outcome.code === "renewal_refused") {
    expect(changes).toEqual({
      lease_event: [expect.objectContaining({ step_id: presented.stepId, fencing_term: Number(presented.fencingTerm), kind: "renewal_refused", reason: outcome.reason })],
    });
  } else if (outcome.code === "authority_lost") {
    const observation = changes.late_observation?.[0];
    expect(changes).toEqual({
      fencing_rejection: [
        expect.objectContaining({
          step_id: presented.stepId,
          operation: outcome.operation,
          presented_term: Number(presented.fencingTerm),
          presented_owner: presented.sessionId,
          reason: outcome.reason,
          late_observation_id: observation?.id,
        }),
      ],
      late_observation: [expect.objectContaining({ step_id: presented.stepId, fencing_term: Number(presented.fencingTerm), operation: outcome.operation })],
    });
  } else {
    // The holder still has authority: an out-of-order write is a programmer error, not a rejection.
    expect(changes).toEqual({});
  }
}

const expectedRefusal = (statement: Statement, reason: RejectionReason): Outcome =>
  statement.operation === null ? { code: "renewal_refused", reason } : { code: "authority_lost", operation: statement.operation, reason };

for (const statement of STATEMENTS) {
  describe(statement.name, () => {
    test("control: with authority, the write is accepted", async ({ db }) => {
      const world = await buildWorld(db.pool, statement.at, statement.at, false);
      expect(await statement.run(db.pool, world.target)).toEqual({ code: "accepted" });
    });

    for (const cause of CAUSES) {
      test(`${cause.reason.replaceAll("_", " ")}: refused as ${cause.reason}, writing only the refusal's own record`, async ({ db }) => {
        const world = await buildWorld(db.pool, statement.at, statement.at, cause.reason === "superseded");
        const presented = await cause.apply(db.pool, world);
        const before = await snapshot(db.pool);
        const outcome = await statement.run(db.pool, presented);
        expect(outcome).toEqual(expectedRefusal(statement, cause.reason));
        expectOnlyTheRecord(added(before, await snapshot(db.pool)), presented, outcome);
      });
    }

    const { outOfOrder } = statement;
    if ("notApplicable" in outOfOrder) {
      test.skip(`checkpoint order: does not apply, ${outOfOrder.notApplicable}`, () => undefined);
    } else {
      const { refusal } = outOfOrder;
      const label = refusal.code === "renewal_refused" ? `refused as ${refusal.reason}, writing only its renewal_refused event` : `refused as ${refusal.code}, writing nothing`;
      test(`checkpoint order: ${label}`, async ({ db }) => {
        const world = await buildWorld(db.pool, outOfOrder.at, statement.at, false);
        const before = await snapshot(db.pool);
        const outcome = statement.operation === null ? await renew(db.pool, world.target, 1) : await statement.run(db.pool, world.target);
        expect(outcome).toEqual(outOfOrder.refusal);
        expectOnlyTheRecord(added(before, await snapshot(db.pool)), world.target, outcome);
      });
    }
  });
}

test("a lease on a step that does not exist is refused as superseded, with no current term, for every statement but renew", async ({ db }) => {
  const session = await registerSession(db.pool, "direct");
  const ghost: LeaseHandle = { stepId: randomUUID(), fencingTerm: 1n, sessionId: session };
  for (const statement of STATEMENTS.filter((s) => s.operation !== null)) {
    expect({ statement: statement.name, outcome: await statement.run(db.pool, ghost) }).toEqual({
      statement: statement.name,
      outcome: { code: "authority_lost", operation: statement.operation, reason: "superseded" },
    });
  }
  const { rows } = await db.pool.query("SELECT count(*)::int AS n, count(current_term)::int AS with_term FROM fencing_rejection WHERE step_id = $1", [ghost.stepId]);
  expect(rows).toEqual([{ n: STATEMENTS.length - 1, with_term: 0 }]);
});
