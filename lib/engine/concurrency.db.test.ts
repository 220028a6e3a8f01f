/**
 * Invariants 1 and 5 under contention: 8 claimers race over 2,000 steps. While they run, a
 * sampler checks that no step ever has two live leases; at the end every step has exactly one
 * receipt, written under the term of the attempt that produced it.
 */
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import { createSingleStepWorkflows, servedFor } from "./test-support";

const STEPS = 2_000;
const CLAIMERS = 8;

test(`${CLAIMERS} claimers over ${STEPS} steps: never two live leases, every step receipted exactly once`, { timeout: 120_000 }, async ({ db }) => {
  await createSingleStepWorkflows(db.pool, STEPS, { adapter: "pure", operation: "noop", stepClass: "pure" });

  let running = true;
  let samples = 0;
  let violations = 0;
  const sampler = (async () => {
    while (running) {
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (
           SELECT step_id FROM lease WHERE ended_at IS NULL AND expires_at > now() GROUP BY step_id HAVING count(*) > 1
         ) doubled`,
      );
      violations += rows[0]!.n;
      samples += 1;
    }
  })();

  const claimer = async () => {
    const session = await registerSession(db.pool, "direct");
    let done = 0;
    for (;;) {
      const claimed = await claimSteps(db.pool, session, servedFor("pure"), 25);
      if (claimed.length === 0) return done;
      const results = await commitReceipts(
        db.pool,
        session,
        claimed.map((c) => ({
          lease: { stepId: c.stepId, fencingTerm: c.fencingTerm, sessionId: session },
          conclusion: { kind: "effect", externalReference: null, result: null, verification: "direct_response" },
        })),
      );
      done += results.filter((r) => r.committed).length;
    }
  };
  const completed = await Promise.all(Array.from({ length: CLAIMERS }, claimer));
  running = false;
  await sampler;

  expect(samples).toBeGreaterThan(3);
  expect(violations).toBe(0);
  expect(completed.reduce((a, b) => a + b, 0)).toBe(STEPS);
  const { rows } = await db.pool.query(
    `SELECT
       (SELECT count(*)::int FROM step WHERE state = 'completed') AS completed,
       (SELECT count(*)::int FROM receipt) AS receipts,
       (SELECT count(DISTINCT step_id)::int FROM receipt) AS receipted_steps,
       (SELECT count(*)::int FROM receipt r JOIN attempt a ON a.id = r.attempt_id WHERE r.fencing_term <> a.fencing_term) AS term_mismatches,
       (SELECT count(*)::int FROM workflow WHERE status = 'completed') AS workflows_completed`,
  );
  expect(rows[0]).toEqual({ completed: STEPS, receipts: STEPS, receipted_steps: STEPS, term_mismatches: 0, workflows_completed: STEPS });
});
