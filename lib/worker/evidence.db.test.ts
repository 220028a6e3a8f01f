/**
 * Lease evidence keeps identities and digests, never request bodies or credentials. A request
 * carrying a card number and an API key runs through dropped answers, recovery, a stale
 * worker's refused writes and a review case; then no evidence table holds either string.
 */
import { afterEach, expect, vi } from "vitest";
import { startDestinationService } from "@/lib/demo/destination/service";
import { dbTest } from "@/lib/db/test-database";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { registerSession } from "@/lib/engine/session";
import { createStepClass, servedFor, setLeaseExpiry, testKindOf } from "@/lib/engine/test-support";
import { createWorkflow } from "@/lib/engine/workflow";
import { scenarioWorkflow } from "@/lib/scenarios/definitions";
import { createRequestsOf, testWorker } from "./test-support";
import type { Worker } from "./worker";

const test = dbTest.extend("destination", { scope: "file" }, async ({ db }, { onCleanup }) => {
  const service = await startDestinationService({ databaseUrl: db.url, port: 0 });
  onCleanup(() => service.close());
  return service;
});

const CARD = "4111-1111-1111-1111";
const API_KEY = "sk_live_EVIDENCE_CANARY";
const EVIDENCE_TABLES = ["lease_event", "late_observation", "fencing_rejection", "recovery_decision", "review_case", "adapter_permit", "worker_session", "epoch_transition", "destination_block"];

let worker: Worker | null = null;
afterEach(async () => {
  await worker?.stop();
  worker = null;
});

test("no request body or credential lands in the evidence tables", async ({ db, destination }) => {
  await createStepClass(db.pool, "quick", { leaseTtlMs: 1_500, renewEveryMs: 500, attemptDeadlineMs: 20_000, graceMs: 500 });
  const secretPayload = { card: CARD, authorization: `Bearer ${API_KEY}`, note: "deliver to the back door" };
  const evidence = scenarioWorkflow(destination.url, "quick", "evidence");
  const workflows = await createRequestsOf(
    db.pool,
    evidence,
    ["idempotent", "queryable", "opaque", "fenced"].map((contract) => ({ contract, payload: secretPayload })),
  );
  // Every answer is dropped once: recovery by contract, a status query, a review case.
  await fetch(`${destination.url}/admin/faults`, { method: "PUT", body: JSON.stringify({ seed: 1, global: { dropResponseRate: 1 } }) });
  worker = testWorker(db.pool, [evidence], {
    hooks: {
      reached: async (name, step) => {
        if (name === "invocation_began" && step.fencingTerm >= 2n) await fetch(`${destination.url}/admin/faults`, { method: "PUT", body: JSON.stringify({}) });
      },
    },
  });
  await worker.start();
  const stepIds = workflows.map((w) => w.stepIds.get("deliver")!);
  await vi.waitFor(async () => {
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM step WHERE id = ANY($1) AND state IN ('completed', 'indeterminate')", [stepIds]);
    expect(rows[0].n).toBe(4);
  }, { timeout: 20_000, interval: 200 });
  await worker.stop();
  worker = null;

  // A stale worker presents a receipt whose result echoes the request (as some destinations'
  // answers do): refused, and kept as a late observation — by its digest.
  const stale = await createWorkflow(db.pool, { kind: testKindOf("t"), input: {}, requester: "test", steps: [{ name: "s", adapter: "t", stepClass: "quick" }] });
  const staleStep = stale.stepIds.get("s")!;
  const session = await registerSession(db.pool, "direct");
  const [claimed] = await claimSteps(db.pool, session, servedFor("t"), 1);
  await setLeaseExpiry(db.pool, staleStep, -1);
  const [refused] = await commitReceipts(db.pool, session, [
    { lease: { stepId: staleStep, fencingTerm: claimed!.fencingTerm, sessionId: session }, conclusion: { kind: "effect", externalReference: "ref-1", result: { delivered: true, echoed: secretPayload }, verification: "direct_response" } },
  ]);
  expect(refused!.committed).toBe(false);

  const { rows: counts } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM late_observation) AS late, (SELECT count(*)::int FROM recovery_decision) AS decisions,
            (SELECT count(*)::int FROM review_case) AS reviews, (SELECT count(*)::int FROM lease_event) AS events`,
  );
  // The evidence tables are not empty: the scan below looks at real rows.
  expect(counts[0]).toMatchObject({ late: expect.any(Number), decisions: expect.any(Number) });
  expect(counts[0].late).toBeGreaterThan(0);
  expect(counts[0].decisions).toBeGreaterThan(0);
  expect(counts[0].reviews).toBeGreaterThan(0);

  for (const table of EVIDENCE_TABLES) {
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${table} t WHERE t::text LIKE '%' || $1 || '%' OR t::text LIKE '%' || $2 || '%'`, [CARD, API_KEY]);
    expect({ table, leaked: rows[0].n }).toEqual({ table, leaked: 0 });
  }
  // Where the request's content must be identified, a digest stands in for it.
  const { rows: digests } = await db.pool.query("SELECT input_digest FROM attempt WHERE step_id = ANY($1)", [stepIds]);
  for (const row of digests) expect(row.input_digest).toMatch(/^[0-9a-f]{64}$|^sha256:/);
});
