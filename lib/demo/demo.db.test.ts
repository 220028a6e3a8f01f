/**
 * The delivery workflow end to end, in-process: the synthetic destination service on a free
 * port, a worker serving the demo's delivery definition, and real PostgreSQL. Every workflow
 * completes with four receipts, and the destination's audit holds exactly one effect per step
 * that reached it — also when answers are dropped after the effect committed.
 */
import type pg from "pg";
import { expect, vi } from "vitest";
import type { FaultSettings } from "@/lib/demo/destination/faults";
import { readAudit, startDestinationService, type DestinationAudit, type DestinationService } from "@/lib/demo/destination/service";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { demoAdapters } from "./adapters";
import { deliveryWorkflow, type DeliverVia, type DeliveryRequest, type DeliveryWorkflow } from "./workflow";

/** A destination service and one worker serving the delivery workflow on it, both stopped when the test finishes. */
async function startDemo(db: TestDatabase, onTestFinished: (cleanup: () => Promise<void>) => void): Promise<{ destination: DestinationService; delivery: DeliveryWorkflow }> {
  const destination = await startDestinationService({ databaseUrl: db.url, port: 0 });
  const delivery = deliveryWorkflow(demoAdapters(destination.url));
  const worker = testWorker(db.pool, [delivery]);
  onTestFinished(async () => {
    await worker.stop();
    await destination.close();
  });
  await worker.start();
  return { destination, delivery };
}

const requestsFor = (deliverVia: readonly DeliverVia[], perDeliverVia: number): DeliveryRequest[] =>
  deliverVia.flatMap((via) =>
    Array.from({ length: perDeliverVia }, (_, index) => ({ recipient: `${via}-${index}@example.test`, message: `hello ${index}`, deliverVia: via })),
  );

/** Creates the requests (with `attemptBudget` on every step when given) and waits until every one has completed. */
async function deliverAll(pool: pg.Pool, delivery: DeliveryWorkflow, requests: readonly DeliveryRequest[], attemptBudget?: number): Promise<string[]> {
  const created = await createRequestsOf(pool, delivery, requests);
  const ids = created.map((workflow) => workflow.workflowId);
  if (attemptBudget !== undefined) await pool.query("UPDATE step SET attempt_budget = $2 WHERE workflow_id = ANY($1)", [ids, attemptBudget]);
  await vi.waitFor(async () => {
    const { rows } = await pool.query("SELECT status, count(*)::int AS count FROM workflow WHERE id = ANY($1) GROUP BY status", [ids]);
    expect(rows).toEqual([{ status: "completed", count: requests.length }]);
  }, { timeout: 25_000, interval: 200 });
  return ids;
}

/** Effects per destination kind: reserve is fenced and notify idempotent in every workflow. */
function expectedEffects(requests: readonly DeliveryRequest[]): DestinationAudit["effects"] {
  const via = (kind: DeliverVia) => requests.filter((request) => request.deliverVia === kind).length;
  return { fenced: requests.length, idempotent: requests.length + via("idempotent"), queryable: via("queryable"), opaque: via("opaque") };
}

const effectsSince = (before: DestinationAudit, after: DestinationAudit): DestinationAudit["effects"] => ({
  fenced: after.effects.fenced - before.effects.fenced,
  idempotent: after.effects.idempotent - before.effects.idempotent,
  queryable: after.effects.queryable - before.effects.queryable,
  opaque: after.effects.opaque - before.effects.opaque,
});

test("every delivery completes with four receipts and one destination effect per step", async ({ db, onTestFinished }) => {
  const { destination, delivery } = await startDemo(db, onTestFinished);
  const before = await readAudit(destination.pool);
  const requests = requestsFor(["idempotent", "queryable", "opaque"], 3);
  const ids = await deliverAll(db.pool, delivery, requests);

  const { rows } = await db.pool.query<{ steps: string[] }>(
    `SELECT array_agg(s.name ORDER BY s.position) AS steps
       FROM receipt r JOIN step s ON s.id = r.step_id
      WHERE s.workflow_id = ANY($1) GROUP BY s.workflow_id`,
    [ids],
  );
  expect(rows).toHaveLength(requests.length);
  for (const row of rows) expect(row.steps).toEqual(["prepare", "reserve", "deliver", "notify"]);

  const audit = await readAudit(destination.pool);
  expect(effectsSince(before, audit)).toEqual(expectedEffects(requests));
  expect(audit.duplicates).toEqual([]);
  expect(audit.fenceRegressions).toEqual([]);
});

test("with answers dropped after the effect, rate limits and errors, each step still takes effect once", async ({ db, onTestFinished }) => {
  const { destination, delivery } = await startDemo(db, onTestFinished);
  // Opaque deliveries are left out: an unknown outcome there goes to a person, by design.
  const faults: FaultSettings = { seed: 7, global: { dropResponseRate: 0.3, rateLimit: { rate: 0.1, retryAfterMs: 100 }, errorRate: 0.05 }, kinds: {} };
  const response = await fetch(`${destination.url}/admin/faults`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(faults) });
  expect(response.status).toBe(200);
  const before = await readAudit(destination.pool);
  const requests = requestsFor(["idempotent", "queryable"], 5);
  // A budget the faults cannot plausibly exhaust: an exhausted step with an unknown outcome goes
  // to review (correctly), and this test is about duplicates, not budgets.
  await deliverAll(db.pool, delivery, requests, 20);

  const audit = await readAudit(destination.pool);
  expect(audit.droppedResponses - before.droppedResponses).toBeGreaterThan(0);
  expect(effectsSince(before, audit)).toEqual(expectedEffects(requests));
  expect(audit.duplicates).toEqual([]);
  expect(audit.fenceRegressions).toEqual([]);
});
