/**
 * Invariant 11 with real worker processes and real signals: a worker SIGKILLed while it holds the
 * parent step (before its park) or right after its park committed leaves each child started
 * exactly once; another worker process recovers the step or carries the children on, and the
 * parent completes with every child's result.
 */
import { afterEach, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { createFastClass } from "@/lib/worker/test-definitions";
import { spawnWorker, stopAll, type WorkerProcess } from "@/lib/worker/test-process";
import { createRequestsOf } from "@/lib/worker/test-support";
import { scenarioOrder } from "./test-definitions";

const PARCELS = Array.from({ length: 12 }, (_, i) => `p${i}`);
const started: WorkerProcess[] = [];

const worker = (url: string, env: Record<string, string> = {}) => {
  const spawned = spawnWorker(url, {
    FENCELINE_DEFINITIONS: "lib/children/test-definitions.ts",
    FENCELINE_RECOVERY_INTERVAL_MS: "300",
    FENCELINE_POLL_INTERVAL_MS: "200",
    ...env,
  });
  started.push(spawned);
  return spawned;
};

afterEach(async () => {
  await stopAll(started.splice(0));
});

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await createFastClass(db.pool);
});

async function countsOf(pool: import("pg").Pool, shipId: string) {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM child_request WHERE parent_step_id = $1) AS links,
            (SELECT count(*)::int FROM workflow WHERE kind = 'scenario-parcel') AS children,
            (SELECT count(*)::int FROM (SELECT idempotency_key FROM workflow WHERE kind = 'scenario-parcel' GROUP BY 1 HAVING count(*) > 1) d) AS duplicate_keys`,
    [shipId],
  );
  return rows[0];
}

for (const pauseAt of ["claimed", "parked"] as const) {
  test(`a worker SIGKILLed at ${pauseAt} on the parent step leaves each child started once, and another worker finishes the order`, { timeout: 90_000 }, async ({ db }) => {
    const [order] = await createRequestsOf(db.pool, scenarioOrder, [{ parcels: PARCELS }]);
    const shipId = order!.stepIds.get("ship")!;
    const victim = worker(db.url, { FENCELINE_PAUSE_AT: pauseAt });
    await victim.waitForLine(new RegExp(`FENCELINE_CHECKPOINT ${pauseAt} ${shipId} 1`));
    if (pauseAt === "parked") expect((await countsOf(db.pool, shipId)).links).toBe(PARCELS.length);
    else expect((await countsOf(db.pool, shipId)).links).toBe(0);
    victim.process.kill("SIGKILL");
    await victim.exited;
    const rescuer = worker(db.url, { FENCELINE_WORKER_CONCURRENCY: "8" });
    await rescuer.waitForLine(/FENCELINE_WORKER_READY/);
    await vi.waitFor(
      async () => {
        const { rows } = await db.pool.query(`SELECT status::text FROM workflow WHERE id = $1`, [order!.workflowId]);
        expect(rows[0].status).toBe("completed");
      },
      { timeout: 45_000, interval: 100 },
    );
    expect(await countsOf(db.pool, shipId)).toEqual({ links: PARCELS.length, children: PARCELS.length, duplicate_keys: 0 });
    const { rows } = await db.pool.query(`SELECT observed_result FROM receipt WHERE step_id = $1`, [order!.stepIds.get("confirm")]);
    expect(rows[0].observed_result).toEqual({ packed: PARCELS });
    // Before its park the killed attempt was recovered (a second term armed the children); after
    // it, the step's one attempt had already armed them, and nothing ran it again.
    const { rows: attempts } = await db.pool.query(`SELECT fencing_term::int AS term, outcome::text FROM attempt WHERE step_id = $1 ORDER BY fencing_term`, [shipId]);
    expect(attempts.map((a) => a.outcome)).toEqual(pauseAt === "claimed" ? ["lease_lost", "waiting"] : ["waiting"]);
  });
}
