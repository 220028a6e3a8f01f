/**
 * `ctx.wait` re-runs the handler from the start; `ctx.waits` tells it how often it already waited
 * and since when (database clock), so a handler that polls can stop after N waits or after a
 * while. A first run has waited 0 times; each wait the step took is counted once, whichever
 * transport carried the claim; the waits are not charged to the attempt budget.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, onTestFinished } from "vitest";
import { closeWorkerProtocol, workerProtocolListener } from "@/lib/api/worker-protocol";
import { createWorkerToken } from "@/lib/auth/worker-tokens";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { httpCoordinator } from "./http-coordinator";
import { createRequestsOf, singleStep, testWorker } from "./test-support";

type Seen = { count: number; firstAt: Date | null; lastAt: Date | null; attempt: number };

function polling(kind: string, seen: Seen[]) {
  return singleStep({
    kind,
    attemptBudget: 1,
    run: async (ctx) => {
      seen.push({ ...ctx.waits, attempt: ctx.attempt.number });
      if (ctx.waits.count < 2) return ctx.wait(0, `not ready yet (${ctx.waits.count})`);
      return done({ waited: ctx.waits.count });
    },
  });
}

async function runUntilDone(db: { pool: import("pg").Pool }, workflow: ReturnType<typeof polling>, worker: ReturnType<typeof testWorker>) {
  const [request] = await createRequestsOf(db.pool, workflow, [{}]);
  await worker.start();
  const stepId = request!.stepIds.get("only")!;
  // Until its receipt exists: the database says when, the loop only looks.
  for (;;) {
    const { rows } = await db.pool.query<{ state: string }>("SELECT state FROM step WHERE id = $1", [stepId]);
    if (rows[0]!.state === "completed") return stepId;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const expectCounted = (seen: readonly Seen[]) => {
  expect(seen.map((run) => run.count)).toEqual([0, 1, 2]);
  expect(seen[0]).toMatchObject({ firstAt: null, lastAt: null });
  expect(seen[1]!.firstAt).toEqual(seen[1]!.lastAt);
  expect(seen[2]!.firstAt).toEqual(seen[1]!.firstAt);
  expect(seen[2]!.lastAt!.getTime()).toBeGreaterThanOrEqual(seen[2]!.firstAt!.getTime());
  // Waiting is not trying: every run is attempt 1 of a budget of 1.
  expect(seen.map((run) => run.attempt)).toEqual([1, 1, 1]);
};

test("a handler that waits twice sees 0, then 1, then 2 waits, since the first", async ({ db }) => {
  const seen: Seen[] = [];
  const workflow = polling("waits-direct", seen);
  const stepId = await runUntilDone(db, workflow, testWorker(db.pool, [workflow]));
  expectCounted(seen);
  const { rows } = await db.pool.query("SELECT observed_result FROM receipt WHERE step_id = $1", [stepId]);
  expect(rows).toEqual([{ observed_result: { waited: 2 } }]);
});

test("over the HTTP worker protocol the same waits arrive", async ({ db }) => {
  const seen: Seen[] = [];
  const workflow = polling("waits-http", seen);
  const { token } = await createWorkerToken(db.pool, "waits-test", "admin@test");
  const server = createServer(workerProtocolListener(db.pool));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await closeWorkerProtocol(db.pool);
  });
  const coordinator = httpCoordinator({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token, timeoutMs: 5_000 });
  await runUntilDone(db, workflow, testWorker(db.pool, [workflow], { coordinator }));
  expectCounted(seen);
});
