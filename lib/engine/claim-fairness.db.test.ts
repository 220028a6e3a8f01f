/**
 * Fair share does not make the claim grow with keys or ready steps: with 100,000 ready steps
 * across 1,000 concurrency keys (taking turns, as request creation positions them) the claim is
 * the same plan as with 100,000 ready steps and no keys — an index scan of step_claim_idx in
 * priority, position and eligibility order, stopping at its limit — and touches at most twice
 * the buffers. (The claim-history test's approach: EXPLAIN (ANALYZE, BUFFERS) of the claim
 * statement itself, rolled back, the median of several.)
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { inTransaction } from "./db";
import { registerSession } from "./session";
import { claimReadySteps } from "./sql/lease";
import { servedFor, testKindOf, truncateEngineTables } from "./test-support";

const READY = 100_000;
const KEYS = 1_000;
const SAMPLES = 15;
const CLAIM_LIMIT = 50;
const ADAPTER = "claim-fairness";

type PlanNode = { "Node Type": string; "Index Name"?: string; "Relation Name"?: string; Plans?: PlanNode[] };
type Explained = { Plan: PlanNode & Record<string, number>; "Execution Time": number };

/**
 * Ready single-step requests, written as creation would write them: without keys, every request
 * at position 1 (one statement, V = 0); with keys, request n is key n % KEYS's (n / KEYS + 1)-th
 * request, at that position.
 */
async function seed(pool: Pool, keyed: boolean): Promise<void> {
  const key = keyed ? `'key-' || (n % ${KEYS})` : "NULL";
  const position = keyed ? `n / ${KEYS} + 1` : "1";
  await pool.query(
    `WITH w AS (
       INSERT INTO workflow (id, kind, version, input, input_digest, requester, tracking_token, steps_remaining, concurrency_key)
       SELECT gen_random_uuid(), $1, 1, jsonb_build_object('n', n), 'digest', 'test', md5(random()::text) || n, 1, ${key}
       FROM generate_series(0, ${READY - 1}) n
       RETURNING id, concurrency_key, (input->>'n')::int AS n
     )
     INSERT INTO step (workflow_id, name, position, adapter, operation, step_class, input_digest, state, attempt_budget, fair_position, concurrency_key, next_eligible_at)
     SELECT id, 'only', 0, $2, 'deliver', 'external', 'digest', 'ready', 5, ${position}, concurrency_key,
            now() - interval '1 hour' + n * interval '1 millisecond'
     FROM w`,
    [testKindOf(ADAPTER), ADAPTER],
  );
  await pool.query("VACUUM ANALYZE");
}

const indexesOf = (node: PlanNode): string[] => [...(node["Index Name"] ? [`${node["Node Type"]} ${node["Index Name"]}`] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
const buffersOf = (plan: Record<string, number>) =>
  plan["Shared Hit Blocks"]! + plan["Shared Read Blocks"]! + plan["Shared Dirtied Blocks"]! + plan["Shared Written Blocks"]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measureClaim(pool: Pool) {
  const session = await registerSession(pool, "direct");
  const [served] = servedFor(ADAPTER);
  const samples: { buffers: number; ms: number; claimed: number; scan: string }[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ "QUERY PLAN": Explained[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${claimReadySteps(CLAIM_LIMIT).text}`, [
        session,
        [served!.kind],
        [served!.version],
      ]);
      const explained = rows[0]!["QUERY PLAN"][0]!;
      const scan = indexesOf(explained.Plan).find((index) => index.endsWith("step_claim_idx")) ?? indexesOf(explained.Plan).join(", ");
      samples.push({ buffers: buffersOf(explained.Plan), ms: explained["Execution Time"], claimed: explained.Plan["Actual Rows"]!, scan });
      await client.query("ROLLBACK; BEGIN");
    });
  }
  return { buffers: median(samples.map((s) => s.buffers)), ms: median(samples.map((s) => s.ms)), claimed: median(samples.map((s) => s.claimed)), scans: new Set(samples.map((s) => s.scan)) };
}

test("with 100,000 ready steps across 1,000 keys the claim is the same plan and within twice the buffers of no keys", { timeout: 300_000 }, async ({ db }) => {
  await truncateEngineTables(db.pool);
  await seed(db.pool, false);
  const plain = await measureClaim(db.pool);
  await truncateEngineTables(db.pool);
  await seed(db.pool, true);
  const keyed = await measureClaim(db.pool);

  console.log(
    `claim of ${CLAIM_LIMIT} among ${READY} ready steps: no keys ${plain.buffers} buffers, ${plain.ms.toFixed(2)} ms; ` +
      `${KEYS} keys ${keyed.buffers} buffers, ${keyed.ms.toFixed(2)} ms (medians of ${SAMPLES})`,
  );
  expect(plain.claimed).toBe(CLAIM_LIMIT);
  expect(keyed.claimed).toBe(CLAIM_LIMIT);
  expect([...plain.scans]).toEqual(["Index Scan step_claim_idx"]);
  expect([...keyed.scans]).toEqual(["Index Scan step_claim_idx"]);
  expect(keyed.buffers).toBeLessThanOrEqual(2 * plain.buffers);
});
