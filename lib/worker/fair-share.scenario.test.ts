/**
 * Fair share across real worker processes on one database (invariant 14 and the destination
 * rate): however the processes' claims interleave, no concurrency key ever has more steps in
 * flight than its kind's limit; and a destination that declares a rate never receives more calls
 * in any one second, counted where they arrive.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, vi } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { FAIR_SHARE_LIMIT, FAIR_SHARE_RATE, limited, rated } from "./fair-share-definitions";
import { spawnWorker, stopAll, type WorkerProcess } from "./test-process";
import { createRequestsOf } from "./test-support";

const started: WorkerProcess[] = [];
const WORKERS = 4;

function startWorkers(url: string, env: Record<string, string> = {}): Promise<string[]> {
  const workers = Array.from({ length: WORKERS }, () =>
    spawnWorker(url, {
      FENCELINE_DEFINITIONS: "lib/worker/fair-share-definitions.ts",
      FENCELINE_WORKER_CONCURRENCY: "8",
      FENCELINE_POLL_INTERVAL_MS: "100",
      FENCELINE_RECOVERY_INTERVAL_MS: "500",
      ...env,
    }),
  );
  started.push(...workers);
  return Promise.all(workers.map((worker) => worker.waitForLine(/FENCELINE_WORKER_READY/, 60_000)));
}

afterEach(async () => {
  await stopAll(started.splice(0));
});

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
});

test("no concurrency key ever has more steps in flight than its limit, under 4 worker processes claiming at once", { timeout: 120_000 }, async ({ db }) => {
  await startWorkers(db.url);
  const keys = ["a", "b", "c"];
  // Key a has most of the work; every worker could run all of a's steps at once if nothing stopped it.
  const perKey = [40, 8, 8];
  const inputs = perKey.flatMap((count, k) => Array.from({ length: count }, () => ({ key: keys[k]!, ms: 40 + Math.floor(Math.random() * 40) })));
  const created = await createRequestsOf(db.pool, limited, inputs.map(({ ms }) => ({ ms })), { concurrencyKey: (i) => inputs[i]!.key });

  // Sampled while they run, from the steps' states, and afterwards from every lease's own times.
  let sampledMax = 0;
  await vi.waitFor(
    async () => {
      const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM step WHERE state = 'leased' GROUP BY concurrency_key");
      sampledMax = Math.max(sampledMax, ...rows.map((row) => row.n));
      const done = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM workflow WHERE status = 'completed'");
      expect(done.rows[0]!.n).toBe(created.length);
    },
    { timeout: 90_000, interval: 15 },
  );
  const { rows } = await db.pool.query<{ key: string; most: number }>(
    `WITH lease AS (
       SELECT s.concurrency_key AS key, a.created_at AS from_at, a.ended_at AS to_at
       FROM attempt a JOIN step s ON s.id = a.step_id
     ),
     edge AS (
       SELECT key, from_at AS at, 1 AS delta FROM lease
       UNION ALL
       SELECT key, to_at, -1 FROM lease
     )
     SELECT key, max(in_flight)::int AS most
     FROM (SELECT key, sum(delta) OVER (PARTITION BY key ORDER BY at, delta) AS in_flight FROM edge) x
     GROUP BY key ORDER BY key`,
  );
  console.log(`most steps in flight per key (limit ${FAIR_SHARE_LIMIT}): ${rows.map((row) => `${row.key} ${row.most}`).join(", ")}; sampled ${sampledMax}`);
  expect(rows.map((row) => row.key)).toEqual(keys);
  for (const row of rows) expect(row.most).toBeLessThanOrEqual(FAIR_SHARE_LIMIT);
  expect(sampledMax).toBeLessThanOrEqual(FAIR_SHARE_LIMIT);
  // The limit was reached, so the test would have seen a breach.
  expect(rows.find((row) => row.key === "a")!.most).toBe(FAIR_SHARE_LIMIT);
});

/** A destination that counts: when each call arrived, by this process's monotonic clock. */
async function countingDestination(): Promise<{ server: Server; url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  const server = createServer((request, response) => {
    arrivals.push(performance.now());
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, arrivals };
}

/** The most calls that arrived within any one second (a window starting at each arrival). */
function mostInAnySecond(arrivals: readonly number[]): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + 1_000) j += 1;
    most = Math.max(most, j - i);
  }
  return most;
}

test("a destination's declared rate is never exceeded in any one second at the destination, across 4 worker processes", { timeout: 120_000 }, async ({ db }) => {
  const destination = await countingDestination();
  try {
    await startWorkers(db.url, { FAIR_SHARE_DESTINATION_URL: destination.url });
    const calls = 60;
    const startedAt = performance.now();
    await createRequestsOf(db.pool, rated, Array.from({ length: calls }, (_, n) => ({ n })));
    await vi.waitFor(
      async () => {
        const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM workflow WHERE status = 'completed'");
        expect(rows[0]!.n).toBe(calls);
      },
      { timeout: 90_000, interval: 100 },
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const most = mostInAnySecond(destination.arrivals);
    const { rows } = await db.pool.query<{ n: number; lapsed: number }>(
      `SELECT count(*) FILTER (WHERE outcome_reason LIKE 'waiting: no call slot free at counting-destination%')::int AS n,
              count(*) FILTER (WHERE outcome_reason LIKE 'waiting: call slot at counting-destination lapsed%')::int AS lapsed
       FROM attempt`,
    );
    console.log(
      `rate ${FAIR_SHARE_RATE.perSecond}/s (burst ${FAIR_SHARE_RATE.burst}): ${destination.arrivals.length} calls in ${seconds.toFixed(1)} s, ` +
        `at most ${most} in any second; ${rows[0]!.n} attempts waited for a call slot, ${rows[0]!.lapsed} let theirs lapse`,
    );
    expect(destination.arrivals).toHaveLength(calls);
    expect(most).toBeLessThanOrEqual(FAIR_SHARE_RATE.perSecond);
    // The rate held the work back: without it, 32 slots would have sent the 60 at once.
    expect(rows[0]!.n).toBeGreaterThan(0);
    expect(seconds).toBeGreaterThan((calls - FAIR_SHARE_RATE.perSecond) / FAIR_SHARE_RATE.perSecond);
  } finally {
    destination.server.close();
  }
});
