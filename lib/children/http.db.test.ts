/**
 * A child step over the HTTP worker protocol: a worker with a token (no database) parks the
 * parent step with its list of children, the protocol server writes them once, and the parent
 * completes with their results.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, expect } from "vitest";
import { z } from "zod";
import { closeWorkerProtocol, workerProtocolListener } from "@/lib/api/worker-protocol";
import { installWorkerToken } from "@/lib/auth/worker-tokens";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { httpCoordinator } from "@/lib/worker/http-coordinator";
import { createRequestsOf } from "@/lib/worker/test-support";
import { Worker } from "@/lib/worker/worker";

const TOKEN = "children-http-token-0123456789";
const words = { upcoming: "Step", current: "Working on it", done: "Done" };
let server: Server | null = null;
let closePool: (() => Promise<void>) | null = null;

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  await closePool?.();
});

const parcel = defineWorkflow({ kind: "http-parcel", version: 1, input: z.object({ i: z.number().int() }) }).step("pack", { milestone: words, run: async (ctx) => done({ i: ctx.input.i }) });
const order = defineWorkflow({ kind: "http-order", version: 1, input: z.object({ n: z.number().int() }) })
  .children("ship", { milestone: words, workflow: parcel, each: (ctx) => Array.from({ length: ctx.input.n }, (_, i) => i), input: (_ctx, i) => ({ i }), maxChildren: 1_000 })
  .step("after", { dependsOn: ["ship"], milestone: words, run: async (ctx) => done({ sum: ctx.results.ship.children.reduce((sum, child) => sum + child.results.pack.i, 0) }) });

test("a worker over HTTP fans out 300 children once, and the parent completes with their results", { timeout: 120_000 }, async ({ db }) => {
  await installWorkerToken(db.pool, "children", TOKEN, "test setup");
  server = createServer(workerProtocolListener(db.pool));
  closePool = () => closeWorkerProtocol(db.pool);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const [request] = await createRequestsOf(db.pool, order, [{ n: 300 }]);
  const worker = new Worker({ coordinator: httpCoordinator({ baseUrl, token: TOKEN, timeoutMs: 10_000 }), workflows: [order, parcel], concurrency: 20, pollIntervalMs: 100, log: () => undefined });
  await worker.start();
  try {
    for (;;) {
      const { rows } = await db.pool.query(`SELECT status::text FROM workflow WHERE id = $1`, [request!.workflowId]);
      if (rows[0].status !== "active") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await worker.stop();
  }
  const { rows } = await db.pool.query(
    `SELECT (SELECT status::text FROM workflow WHERE id = $1) AS status,
            (SELECT count(*)::int FROM workflow WHERE kind = 'http-parcel') AS children,
            (SELECT count(DISTINCT index)::int FROM child_request WHERE parent_workflow_id = $1) AS indexes,
            (SELECT observed_result FROM receipt WHERE step_id = $2) AS after`,
    [request!.workflowId, request!.stepIds.get("after")],
  );
  expect(rows[0]).toEqual({ status: "completed", children: 300, indexes: 300, after: { sum: (299 * 300) / 2 } });
});
