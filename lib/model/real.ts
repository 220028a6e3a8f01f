/**
 * The real system under test: the engine's own functions on real PostgreSQL, three worker
 * sessions, and the fake destinations. It reads the engine's state back by SQL in the same shape
 * as the model's projection, and checks SPEC.md's invariants against the database.
 */
import type { Pool } from "pg";
import type { Scheduler } from "fast-check";
import { inTransaction } from "@/lib/engine/db";
import { registerSession } from "@/lib/engine/session";
import { createStepClass, registerTestContracts, TEST_CONTRACTS } from "@/lib/engine/test-support";
import { FakeDestinations } from "./destinations";
import { KINDS, SLOTS, WORKERS, type Kind, type Model } from "./model";

export const STEP_CLASS = "model-long";

/**
 * Empties the engine's tables between sequences. A sequence leaves a few dozen rows, and deleting
 * them costs a fraction of TRUNCATE, which replaces every table's and index's files (about 40);
 * receipts, which refuse DELETE, are the one table truncated. The history tables refuse DELETE
 * unless `fenceline.retention` is on, as it is for the retention job.
 */
async function emptyEngineTables(pool: Pool): Promise<void> {
  await inTransaction(pool, (client) =>
    client.query(`
SET LOCAL fenceline.retention = 'on';
TRUNCATE receipt;
DELETE FROM receipt_step;
DELETE FROM adapter_permit; DELETE FROM review_case; DELETE FROM late_observation;
DELETE FROM fencing_rejection; DELETE FROM recovery_decision; DELETE FROM lease_event; DELETE FROM attempt;
DELETE FROM step_dependency; DELETE FROM step; DELETE FROM workflow; DELETE FROM worker_session; DELETE FROM adapter_capacity;`),
  );
}

/** One adapter (and workflow kind) name per (kind, slot), so a claim can target exactly one slot's step. */
export const adapterFor = (kind: Kind, slot: number): string => `model-${kind}-${slot}`;

/** Once per database: the long-lease step class and the per-slot contracts. */
export async function prepareDatabase(pool: Pool): Promise<void> {
  // Nothing expires by the wall clock during a run: only the `expire` command moves time.
  await createStepClass(pool, STEP_CLASS, { leaseTtlMs: 3_600_000, renewEveryMs: 60_000, attemptDeadlineMs: 7_200_000, graceMs: 60_000 });
  await registerTestContracts(
    pool,
    KINDS.flatMap((kind) => Array.from({ length: SLOTS }, (_, slot) => ({ ...TEST_CONTRACTS[kind], name: adapterFor(kind, slot) }))),
  );
}

export class Real {
  sessions: string[] = [];
  stepIds: (string | null)[] = [];
  workflowIds: (string | null)[] = [];
  kinds: (Kind | null)[] = [];
  destinations = new FakeDestinations();
  /** Set by the property: orders the starts of concurrent operations. */
  scheduler: Scheduler | null = null;
  /** Counts what ran, for the report. */
  stats = { sequences: 0, commands: 0 };

  constructor(readonly pool: Pool) {}

  /** Set once a command has run since the last reset: only then is there anything to empty. */
  dirty = true;

  /**
   * Empties the engine's tables and starts three fresh worker sessions. A sequence in which no
   * command ran (every precondition failed) left the database as reset, sessions included.
   */
  async reset(): Promise<void> {
    if (this.dirty) {
      await emptyEngineTables(this.pool);
      this.sessions = await Promise.all(Array.from({ length: WORKERS }, (_, w) => registerSession(this.pool, "model", 1000 + w)));
      this.dirty = false;
    }
    this.stepIds = Array.from({ length: SLOTS }, () => null);
    this.workflowIds = Array.from({ length: SLOTS }, () => null);
    this.kinds = Array.from({ length: SLOTS }, () => null);
    this.destinations = new FakeDestinations();
  }

  stepId(slot: number): string {
    const id = this.stepIds[slot];
    if (!id) throw new Error(`real: slot ${slot} has no step`);
    return id;
  }

  /** Runs two operations at once; the scheduler picks which one starts first. */
  async concurrently<A, B>(a: () => Promise<A>, b: () => Promise<B>): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B>]> {
    const s = this.scheduler;
    if (!s) return Promise.allSettled([a(), b()]);
    const first = s.schedule(Promise.resolve("a")).then(a);
    const second = s.schedule(Promise.resolve("b")).then(b);
    await s.waitAll();
    return Promise.allSettled([first, second]);
  }
}

/** The engine's state per slot, in the model's vocabulary. */
export type Snapshot = {
  slots: (null | {
    state: string;
    workflow: string;
    term: number;
    attemptsStarted: number;
    nextMode: string;
    identity: string | null;
    lease: null | { term: number; holder: number; checkpointVersion: number };
    attempt: null | { checkpoint: string; observedEffect: string | null; ref: string | null; mode: string };
    lateRefs: string[];
    receipt: null | { ref: string | null; method: string; term: number };
    openReviews: number;
    reviews: { status: string; version: number; resolution: string | null; ref: string | null }[];
    decisions: string[];
    effects: string[];
  })[];
  rejections: number;
};

type SlotRow = {
  id: string;
  state: string;
  workflow: string;
  term: string;
  attempts_started: number;
  next_mode: string;
  identity: string | null;
  lease_term: string | null;
  lease_owner: string | null;
  lease_cpv: number | null;
  checkpoint: string | null;
  observed_effect: string | null;
  attempt_ref: string | null;
  attempt_mode: string | null;
  late_refs: string[];
  receipt_ref: string | null;
  receipt_method: string | null;
  receipt_term: string | null;
  receipts: number;
  open_reviews: number;
  reviews: { status: string; version: number; resolution: string | null; ref: string | null }[];
  decisions: string[];
};

const SNAPSHOT_SQL = `
SELECT s.id, s.state, w.status AS workflow, s.fencing_term AS term, s.attempts_started, s.next_mode,
       s.request_identity AS identity,
       l.fencing_term AS lease_term, l.owner_session_id AS lease_owner, l.checkpoint_version AS lease_cpv,
       a.checkpoint, a.observed_effect, a.external_reference AS attempt_ref, a.mode AS attempt_mode,
       coalesce((SELECT array_agg(o.external_reference ORDER BY o.external_reference) FROM late_observation o
                 WHERE o.step_id = s.id AND o.external_reference IS NOT NULL), '{}') AS late_refs,
       r.external_reference AS receipt_ref, r.verification_method AS receipt_method, r.fencing_term AS receipt_term,
       (SELECT count(*)::int FROM receipt x WHERE x.step_id = s.id) AS receipts,
       (SELECT count(*)::int FROM review_case c WHERE c.step_id = s.id AND c.status = 'open') AS open_reviews,
       coalesce((SELECT json_agg(json_build_object('status', c.status, 'version', c.version, 'resolution', c.resolution, 'ref', c.external_reference)
                                 ORDER BY c.opened_at, c.id)
                 FROM review_case c WHERE c.step_id = s.id), '[]') AS reviews,
       coalesce((SELECT array_agg(d.category::text ORDER BY d.fencing_term) FROM recovery_decision d WHERE d.step_id = s.id), '{}') AS decisions
FROM step s
JOIN workflow w ON w.id = s.workflow_id
LEFT JOIN lease l ON l.step_id = s.id AND l.ended_at IS NULL
LEFT JOIN attempt a ON a.step_id = s.id AND a.fencing_term = s.fencing_term
LEFT JOIN receipt r ON r.step_id = s.id
WHERE s.id = ANY($1::uuid[])`;

export async function readSnapshot(real: Real): Promise<Snapshot> {
  const ids = real.stepIds.filter((id): id is string => id !== null);
  const [{ rows }, rejections] = await Promise.all([
    real.pool.query<SlotRow>(SNAPSHOT_SQL, [ids]),
    real.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM fencing_rejection"),
  ]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return {
    rejections: rejections.rows[0]!.n,
    slots: real.stepIds.map((id, slot) => {
      if (!id) return null;
      const row = byId.get(id)!;
      if (row.receipts > 1) throw new Error(`invariant 5: step in slot ${slot} has ${row.receipts} receipts`);
      return {
        state: row.state,
        workflow: row.workflow,
        term: Number(row.term),
        attemptsStarted: row.attempts_started,
        nextMode: row.next_mode,
        identity: row.identity,
        lease: row.lease_term === null ? null : {
          term: Number(row.lease_term),
          holder: real.sessions.indexOf(row.lease_owner!),
          checkpointVersion: row.lease_cpv!,
        },
        attempt: row.checkpoint === null ? null : {
          checkpoint: row.checkpoint, observedEffect: row.observed_effect, ref: row.attempt_ref, mode: row.attempt_mode!,
        },
        lateRefs: row.late_refs,
        receipt: row.receipt_method === null ? null : { ref: row.receipt_ref, method: row.receipt_method, term: Number(row.receipt_term) },
        openReviews: row.open_reviews,
        reviews: row.reviews,
        decisions: row.decisions,
        effects: real.destinations.effectsOn(`s${slot}`).map((e) => e.ref),
      };
    }),
  };
}

/** The model's state in the snapshot's shape. */
export function project(model: Model): Snapshot {
  return {
    rejections: model.rejections,
    slots: model.steps.map((step) => {
      if (!step) return null;
      const attempt = step.attempts.find((a) => a.term === step.term);
      const open = step.lease && step.lease.ended === null ? step.lease : null;
      return {
        state: step.state,
        workflow: step.workflow,
        term: step.term,
        attemptsStarted: step.attemptsStarted,
        nextMode: step.nextMode,
        identity: step.identity,
        lease: open ? { term: open.term, holder: open.holder, checkpointVersion: open.checkpointVersion } : null,
        attempt: attempt ? { checkpoint: attempt.checkpoint, observedEffect: attempt.observedEffect, ref: attempt.ref, mode: attempt.mode } : null,
        lateRefs: [...step.lateRefs].sort(),
        receipt: step.receipt,
        openReviews: step.reviews.filter((c) => c.status === "open").length,
        reviews: step.reviews,
        decisions: step.decisions,
        effects: step.applied,
      };
    }),
  };
}

/**
 * SPEC.md's invariants, checked on the database (and the destinations' audits) whatever the
 * model says. Returns the violations found.
 */
export async function checkInvariants(real: Real): Promise<string[]> {
  const { rows } = await real.pool.query<{ invariant: string; step_id: string }>(INVARIANTS_SQL);
  const violations = rows.map((row) => `invariant ${row.invariant} violated by step ${row.step_id}`);
  for (const kind of ["fenced", "idempotent"] as const) {
    const seen = new Set<string>();
    for (const effect of real.destinations.audit[kind]) {
      const key = `${effect.resource}/${effect.identity}`;
      if (seen.has(key)) violations.push(`invariant 6 violated: ${kind} destination applied ${key} twice`);
      seen.add(key);
    }
    const resources = new Set(real.destinations.audit[kind].map((e) => e.resource));
    for (const resource of resources) {
      const n = real.destinations.audit[kind].filter((e) => e.resource === resource).length;
      if (n > 1) violations.push(`invariant 6 violated: ${kind} destination applied ${n} effects for ${resource}`);
    }
  }
  return violations;
}

const INVARIANTS_SQL = `
-- 1. at most one current lease per step, and an open lease exactly when the step is leased
SELECT '1' AS invariant, s.id AS step_id FROM step s
WHERE (SELECT count(*) FROM lease l WHERE l.step_id = s.id AND l.ended_at IS NULL) > 1
   OR ((s.state = 'leased') <> EXISTS (SELECT 1 FROM lease l WHERE l.step_id = s.id AND l.ended_at IS NULL))
UNION ALL
-- 1. every lease names the attempt of its own step and fencing term
SELECT '1', l.step_id FROM lease l LEFT JOIN attempt a ON a.id = l.attempt_id
WHERE a.id IS NULL OR a.step_id <> l.step_id OR a.fencing_term <> l.fencing_term
UNION ALL
-- 2. a receipt carries its attempt's term, and that lease ended by the receipt or by recovery
SELECT '2', r.step_id FROM receipt r JOIN attempt a ON a.id = r.attempt_id
JOIN lease l ON l.step_id = a.step_id AND l.fencing_term = a.fencing_term
WHERE r.fencing_term <> a.fencing_term OR l.end_reason NOT IN ('receipt', 'expired', 'revoked')
UNION ALL
-- 3. every expired lease entered recovery, which never made an unknown outcome plainly ready
SELECT '3', l.step_id FROM lease l
WHERE l.end_reason = 'expired'
  AND NOT EXISTS (SELECT 1 FROM recovery_decision d WHERE d.step_id = l.step_id AND d.fencing_term = l.fencing_term)
UNION ALL
SELECT '3', d.step_id FROM recovery_decision d JOIN attempt a ON a.step_id = d.step_id AND a.fencing_term = d.fencing_term
WHERE d.category = 'make_ready' AND a.invocation_began_at IS NOT NULL AND a.observed_effect IS DISTINCT FROM 'absent'
UNION ALL
-- 4. a request identity exists before any invocation
SELECT '4', a.step_id FROM attempt a WHERE a.invocation_began_at IS NOT NULL AND a.request_identity IS NULL
UNION ALL
-- 5. a completed step has exactly one receipt; a receipt means the step completed
SELECT '5', s.id FROM step s
WHERE (s.state IN ('completed', 'completed_without_effect')) <> EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = s.id)
UNION ALL
-- 7. an opaque unknown outcome is never retried automatically
SELECT '7', p.step_id FROM attempt p JOIN step s ON s.id = p.step_id
WHERE s.adapter LIKE 'model-opaque-%' AND p.invocation_began_at IS NOT NULL AND p.observed_effect IS NULL
  AND EXISTS (SELECT 1 FROM attempt q WHERE q.step_id = p.step_id AND q.fencing_term > p.fencing_term)
UNION ALL
-- 7/8. an indeterminate step has an open review; nothing is stranded: a ready step can be claimed
SELECT '7', s.id FROM step s
WHERE s.state = 'indeterminate' AND NOT EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open')
UNION ALL
SELECT '8', s.id FROM step s JOIN workflow w ON w.id = s.workflow_id
WHERE s.state IN ('ready', 'blocked') AND w.status <> 'active'
UNION ALL
-- 7. an open review case belongs to a step awaiting review; a resolved one says who settled it and how
SELECT '7', c.step_id FROM review_case c JOIN step s ON s.id = c.step_id
WHERE (c.status = 'open' AND s.state <> 'indeterminate')
   OR (c.status = 'resolved' AND (c.resolved_by IS NULL OR c.resolved_at IS NULL OR c.resolution IS NULL))
UNION ALL
-- 5/7. confirmed delivered: the step completed with a manual-review receipt carrying the person's reference;
-- confirmed not delivered: no call of the step is left with an unknown effect
SELECT '5', c.step_id FROM review_case c JOIN step s ON s.id = c.step_id
WHERE c.resolution = 'confirm_delivered'
  AND NOT EXISTS (SELECT 1 FROM receipt r WHERE r.step_id = c.step_id AND r.verification_method = 'manual_review'
                  AND r.external_reference = c.external_reference)
UNION ALL
SELECT '7', c.step_id FROM review_case c
WHERE c.resolution = 'confirm_not_delivered'
  AND EXISTS (SELECT 1 FROM attempt a WHERE a.step_id = c.step_id AND a.invocation_began_at IS NOT NULL
              AND a.observed_effect IS NULL AND a.created_at <= c.resolved_at)`;
