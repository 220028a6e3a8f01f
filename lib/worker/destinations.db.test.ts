/**
 * Recovery end to end against the synthetic destination service: a real worker, real HTTP, real
 * PostgreSQL. Each row of SPEC's recovery table that depends on what the destination can do is
 * driven here by the destination's own faults, and its effect audit shows what happened there.
 */
import type { Pool } from "pg";
import { afterEach, describe, expect, vi } from "vitest";
import { readAudit, startDestinationService, type DestinationService } from "@/lib/demo/destination/service";
import type { FaultSettings } from "@/lib/demo/destination/faults";
import { dbTest } from "@/lib/db/test-database";
import { createStepClass, truncateEngineTables } from "@/lib/engine/test-support";
import { scenarioWorkflow } from "@/lib/scenarios/definitions";
import type { Contract } from "@/lib/scenarios/types";
import type { CheckpointHooks } from "./hooks";
import { createRequestsOf, testWorker } from "./test-support";
import type { Worker } from "./worker";

const test = dbTest.extend("destination", { scope: "file" }, async ({ db }, { onCleanup }) => {
  const service = await startDestinationService({ databaseUrl: db.url, port: 0 });
  onCleanup(() => service.close());
  return service;
});

const running: Worker[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((worker) => worker.stop()));
});

test.beforeEach(async ({ db, destination }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE destination.effect, destination.fence, destination.binding");
  await setFaults(destination, {});
  await createStepClass(db.pool, "quick", { leaseTtlMs: 1_500, renewEveryMs: 500, attemptDeadlineMs: 20_000, graceMs: 500 });
});

async function setFaults(destination: DestinationService, settings: Partial<FaultSettings>): Promise<void> {
  const response = await fetch(`${destination.url}/admin/faults`, { method: "PUT", body: JSON.stringify({ seed: 7, ...settings }) });
  expect(response.status).toBe(200);
}

/** Clears every fault when the second attempt is about to call: the first one alone meets them. */
const faultsOnlyForTheFirstTerm = (destination: DestinationService): CheckpointHooks => ({
  reached: async (name, step) => {
    if (name === "invocation_began" && step.fencingTerm >= 2n) await setFaults(destination, {});
  },
});

/** One step on the destination's contract of the request's choosing, on the `quick` class. */
const onDestination = (destination: DestinationService) => scenarioWorkflow(destination.url, "quick", "destination-test");

function startWorker(pool: Pool, destination: DestinationService, hooks?: CheckpointHooks): Worker {
  const worker = testWorker(pool, [onDestination(destination)], { hooks });
  running.push(worker);
  return worker;
}

async function oneStepOn(pool: Pool, destination: DestinationService, contract: Contract): Promise<string> {
  const [created] = await createRequestsOf(pool, onDestination(destination), [{ contract, payload: { to: "ada@example.test" } }]);
  return created!.stepIds.get("deliver")!;
}

type StepReport = {
  state: string;
  attempts: { term: number; mode: string; checkpoint: string; outcome: string | null; observed_effect: string | null; request_identity: string | null }[];
  decisions: string[];
  receipt: { verification_method: string; external_reference: string | null; request_identity: string | null } | null;
  openReviews: number;
};

async function report(pool: Pool, stepId: string): Promise<StepReport> {
  const { rows } = await pool.query(
    `SELECT s.state,
            (SELECT json_agg(json_build_object('term', a.fencing_term, 'mode', a.mode, 'checkpoint', a.checkpoint, 'outcome', a.outcome,
                                               'observed_effect', a.observed_effect, 'request_identity', a.request_identity) ORDER BY a.fencing_term)
               FROM attempt a WHERE a.step_id = s.id) AS attempts,
            (SELECT coalesce(json_agg(d.category ORDER BY d.id), '[]') FROM recovery_decision d WHERE d.step_id = s.id) AS decisions,
            (SELECT json_build_object('verification_method', r.verification_method, 'external_reference', r.external_reference,
                                      'request_identity', r.request_identity) FROM receipt r WHERE r.step_id = s.id) AS receipt,
            (SELECT count(*)::int FROM review_case c WHERE c.step_id = s.id AND c.status = 'open') AS "openReviews"
     FROM step s WHERE s.id = $1`,
    [stepId],
  );
  return rows[0] as StepReport;
}

const settled = async (pool: Pool, stepId: string, state: string) => {
  await vi.waitFor(async () => expect((await report(pool, stepId)).state).toBe(state), { timeout: 15_000, interval: 100 });
  return report(pool, stepId);
};

describe("a clean call", () => {
  for (const adapter of ["fenced", "idempotent", "queryable", "opaque"] as const) {
    test(`${adapter}: one attempt, one effect, a receipt from the direct response`, async ({ db, destination }) => {
      const stepId = await oneStepOn(db.pool, destination, adapter);
      await startWorker(db.pool, destination).start();
      const done = await settled(db.pool, stepId, "completed");
      expect(done.attempts).toHaveLength(1);
      expect(done.attempts[0]).toMatchObject({ checkpoint: "receipt_committed", outcome: "effect", observed_effect: "present", request_identity: `fl-${stepId}` });
      expect(done.receipt).toMatchObject({ verification_method: "direct_response", request_identity: `fl-${stepId}` });
      expect(done.receipt!.external_reference).toMatch(/^[a-z]{3}_/);
      expect((await readAudit(destination.pool)).total).toBe(1);
    });
  }
});

describe("the destination committed, then dropped its answer", () => {
  const dropFirst = (destination: DestinationService) => setFaults(destination, { global: { dropResponseRate: 1 } });

  test("idempotent: retried with the same key, verified by the destination's replay", async ({ db, destination }) => {
    await dropFirst(destination);
    const stepId = await oneStepOn(db.pool, destination, "idempotent");
    await startWorker(db.pool, destination, faultsOnlyForTheFirstTerm(destination)).start();
    const done = await settled(db.pool, stepId, "completed");
    expect(done.decisions).toEqual(["retry_same_key"]);
    expect(done.attempts.map((a) => a.request_identity)).toEqual([`fl-${stepId}`, `fl-${stepId}`]);
    expect(done.receipt!.verification_method).toBe("idempotent_replay");
    const audit = await readAudit(destination.pool);
    expect(audit.effects.idempotent).toBe(1);
    expect(audit.duplicates).toEqual([]);
  });

  test("fenced: retried under a newer term with the same identity; the destination replays, never applies twice", async ({ db, destination }) => {
    await dropFirst(destination);
    const stepId = await oneStepOn(db.pool, destination, "fenced");
    await startWorker(db.pool, destination, faultsOnlyForTheFirstTerm(destination)).start();
    const done = await settled(db.pool, stepId, "completed");
    expect(done.decisions).toEqual(["retry_same_identity"]);
    expect(done.receipt!.verification_method).toBe("idempotent_replay");
    const audit = await readAudit(destination.pool);
    expect(audit.effects.fenced).toBe(1);
    expect(audit.fenceRegressions).toEqual([]);
  });

  test("queryable: a status query finds the effect and the receipt says so", async ({ db, destination }) => {
    await dropFirst(destination);
    const stepId = await oneStepOn(db.pool, destination, "queryable");
    await startWorker(db.pool, destination).start();
    const done = await settled(db.pool, stepId, "completed");
    expect(done.decisions).toEqual(["status_query"]);
    expect(done.attempts.map((a) => a.mode)).toEqual(["execute", "status_query"]);
    expect(done.receipt!.verification_method).toBe("status_query");
    expect((await readAudit(destination.pool)).effects.queryable).toBe(1);
  });

  test("opaque: a review case, and no second call", async ({ db, destination }) => {
    await dropFirst(destination);
    const stepId = await oneStepOn(db.pool, destination, "opaque");
    await startWorker(db.pool, destination).start();
    const done = await settled(db.pool, stepId, "indeterminate");
    expect(done.decisions).toEqual(["review"]);
    expect(done.openReviews).toBe(1);
    expect(done.attempts).toHaveLength(1);
    // Give a wrongly scheduled retry the time to happen.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await report(db.pool, stepId)).attempts).toHaveLength(1);
    expect((await readAudit(destination.pool)).effects.opaque).toBe(1);
  });
});

describe("answers that say nothing was applied", () => {
  test("a status query that finds nothing leads to a retry with the same identity", async ({ db, destination }) => {
    // The first create fails before any effect but the worker never hears why: an unknown
    // outcome (timeout) on a destination where nothing happened.
    await setFaults(destination, { kinds: { queryable: { latency: { fixedMs: 8_000, jitterMs: 0 }, errorRate: 1 } } });
    await createStepClass(db.pool, "quick", { leaseTtlMs: 1_500, renewEveryMs: 500, attemptDeadlineMs: 20_000, graceMs: 500 });
    const stepId = await oneStepOn(db.pool, destination, "queryable");
    await startWorker(db.pool, destination, faultsOnlyForTheFirstTerm(destination)).start();
    const done = await vi.waitFor(
      async () => {
        const now = await report(db.pool, stepId);
        expect(now.state).toBe("completed");
        return now;
      },
      { timeout: 25_000, interval: 200 },
    );
    expect(done.decisions).toEqual(["status_query", "retry_same_identity"]);
    expect(done.attempts.map((a) => [a.mode, a.observed_effect])).toEqual([
      ["execute", null],
      ["status_query", "absent"],
      ["retry_same_identity", "present"],
    ]);
    expect(done.receipt!.verification_method).toBe("direct_response");
  }, 40_000);

  test("a definite failure is retried with the same identity even at an opaque destination", async ({ db, destination }) => {
    await setFaults(destination, { global: { errorRate: 1 } });
    const stepId = await oneStepOn(db.pool, destination, "opaque");
    await startWorker(db.pool, destination, faultsOnlyForTheFirstTerm(destination)).start();
    const done = await settled(db.pool, stepId, "completed");
    expect(done.decisions).toEqual(["retry_same_identity"]);
    expect(done.attempts[0]).toMatchObject({ checkpoint: "response_observed", outcome: "failed", observed_effect: "absent" });
    expect(done.openReviews).toBe(0);
    expect((await readAudit(destination.pool)).effects.opaque).toBe(1);
  });

  test("a rate limit releases the lease and waits without spending the attempt budget", async ({ db, destination }) => {
    await setFaults(destination, { global: { rateLimit: { rate: 1, retryAfterMs: 400 } } });
    const stepId = await oneStepOn(db.pool, destination, "idempotent");
    await startWorker(db.pool, destination).start();
    await vi.waitFor(async () => {
      const { rows } = await db.pool.query(
        `SELECT count(*)::int AS n FROM lease_history WHERE step_id = $1 AND kind = 'released' AND reason LIKE 'waiting: %rate limited%'`,
        [stepId],
      );
      expect(rows[0].n).toBeGreaterThanOrEqual(2);
    }, { timeout: 10_000 });
    // While it waits, the step holds no lease and becomes eligible only after retry-after.
    const { rows: waiting } = await db.pool.query(
      `SELECT s.attempts_started, (SELECT count(*)::int FROM lease l WHERE l.step_id = s.id AND l.ended_at IS NULL) AS open_leases,
              (s.next_eligible_at - s.updated_at) >= interval '399 milliseconds' AS waits_retry_after
       FROM step s WHERE s.id = $1 AND s.state = 'ready'`,
      [stepId],
    );
    if (waiting[0]) expect(waiting[0]).toMatchObject({ attempts_started: 0, open_leases: 0, waits_retry_after: true });
    await setFaults(destination, {});
    const done = await settled(db.pool, stepId, "completed");
    expect(done.decisions).toEqual([]);
    expect(done.attempts.at(-1)!.mode).toBe("retry_same_identity");
    const { rows } = await db.pool.query("SELECT attempts_started FROM step WHERE id = $1", [stepId]);
    expect(rows[0].attempts_started).toBe(1);
  });
});
