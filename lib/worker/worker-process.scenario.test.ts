/**
 * Real worker processes, real PostgreSQL, real signals. A worker killed with SIGKILL in the
 * middle of an attempt is recovered within lease TTL plus the scan interval (measured on the
 * database clock), and nothing acknowledged is lost when workers die mid-run (invariant 8).
 */
import { afterEach, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { createFastClass, FAST_CLASS, sleepOnce, sleepThenDone } from "./test-definitions";
import { spawnWorker, stopAll, type WorkerProcess } from "./test-process";
import { createRequestsOf } from "./test-support";

const LEASE_TTL_MS = FAST_CLASS.leaseTtlMs;
const SCAN_INTERVAL_MS = 500;
const started: WorkerProcess[] = [];

const worker = (url: string, env: Record<string, string> = {}) => {
  const spawned = spawnWorker(url, { FENCELINE_RECOVERY_INTERVAL_MS: String(SCAN_INTERVAL_MS), FENCELINE_POLL_INTERVAL_MS: "200", ...env });
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

test("a worker killed with SIGKILL mid-attempt is recovered within lease TTL + scan interval", { timeout: 60_000 }, async ({ db }) => {
  const [created] = await createRequestsOf(db.pool, sleepOnce, [{ ms: 2_000 }]);
  const stepId = created!.stepIds.get("work")!;

  // The victim holds the step at its claim (renewing) until it is killed, however slow the box.
  const victim = worker(db.url, { FENCELINE_PAUSE_AT: "claimed" });
  await victim.waitForLine(new RegExp(`FENCELINE_CHECKPOINT claimed ${stepId} 1`));
  const rescuer = worker(db.url);
  await rescuer.waitForLine(/FENCELINE_WORKER_READY/);
  // Let the victim renew at least once, so the kill lands in a lease that was being kept alive.
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM lease_event WHERE step_id = $1 AND kind = 'renewed'", [stepId]);
    expect(rows[0].n).toBeGreaterThan(0);
  }, { timeout: 5_000 });

  victim.process.kill("SIGKILL");
  const { rows: killedAt } = await db.pool.query<{ at: Date }>("SELECT now() AS at");
  await victim.exited;

  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT state FROM step WHERE id = $1", [stepId]);
    expect(rows[0].state).toBe("completed");
  }, { timeout: 20_000, interval: 100 });

  const { rows } = await db.pool.query<{ decided_at: Date; category: string; trigger: string }>(
    "SELECT decided_at, category, trigger FROM recovery_decision WHERE step_id = $1",
    [stepId],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ category: "make_ready", trigger: "lease_expired" });
  const recoveryMs = rows[0]!.decided_at.getTime() - killedAt[0]!.at.getTime();
  // The last renewal happened before the kill, so expiry comes at most one TTL after it; the
  // scan runs every interval, with ±10 % jitter; 100 ms covers the scan's own transaction.
  const boundMs = LEASE_TTL_MS + SCAN_INTERVAL_MS * 1.1 + 100;
  console.log(`recovery latency after SIGKILL: ${recoveryMs} ms (bound ${boundMs} ms)`);
  expect(recoveryMs).toBeLessThanOrEqual(boundMs);

  const receipt = await db.pool.query("SELECT fencing_term FROM receipt WHERE step_id = $1", [stepId]);
  expect(receipt.rows).toEqual([{ fencing_term: "2" }]);
});

test("nothing acknowledged is lost when workers are killed mid-run (invariant 8)", { timeout: 90_000 }, async ({ db }) => {
  const traced = { FENCELINE_WORKER_CONCURRENCY: "4", FENCELINE_TRACE_CHECKPOINTS: "1" };
  // Both workers are up before the work exists: on a slow box one worker could otherwise finish
  // it all before the other has started.
  const first = worker(db.url, traced);
  const second = worker(db.url, traced);
  await Promise.all([first.waitForLine(/FENCELINE_WORKER_READY/), second.waitForLine(/FENCELINE_WORKER_READY/)]);
  const created = await createRequestsOf(db.pool, sleepThenDone, Array.from({ length: 40 }, (_, i) => ({ i, ms: 150 })));
  await first.waitForLine(/FENCELINE_CHECKPOINT claimed/);
  await second.waitForLine(/FENCELINE_CHECKPOINT claimed/);
  first.process.kill("SIGKILL");
  await first.exited;
  // The replacement joins while the second worker still runs; then the second dies too.
  const replacement = worker(db.url, traced);
  await replacement.waitForLine(/FENCELINE_WORKER_READY/);
  second.process.kill("SIGKILL");
  await second.exited;

  await vi.waitFor(async () => {
    const { rows } = await db.pool.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM workflow GROUP BY status");
    expect(rows).toEqual([{ status: "completed", n: created.length }]);
  }, { timeout: 60_000, interval: 250 });

  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM receipt) AS receipts,
            (SELECT count(*)::int FROM recovery_decision) > 0 AS recovered,
            (SELECT count(*)::int FROM step WHERE state <> 'completed') AS unfinished`,
  );
  expect(rows[0]).toEqual({ receipts: created.length * 2, recovered: true, unfinished: 0 });
});
