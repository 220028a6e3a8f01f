/**
 * The claim's cost does not grow with history. History here is time: 1× is 30 days of audit
 * detail and finished attempts at a steady rate, 10× is 300 days at the same rate, the audit
 * detail in the monthly partitions the retention job keeps. The claim reads no history table and
 * writes none (its lease is the attempt row it inserts; `acquired` is derived from it, decision
 * 007), and finished attempts sit beside the new one in the attempt table, kept forever: its plan
 * is the same at both sizes and it touches the same number of buffers, give or take an index level.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { inTransaction } from "./db";
import { ensureHistoryPartitions } from "./retention";
import { registerSession } from "./session";
import { claimReadySteps } from "./sql/lease";
import { createSingleStepWorkflows, servedFor } from "./test-support";

/** Audit detail per day: lease events; the other three tables a tenth of it each. */
const LEASE_EVENTS_PER_DAY = 1_000;
/** Finished attempts per day, each of a step of its own that is completed. */
const ATTEMPTS_PER_DAY = 100;
const SAMPLES = 15;
const CLAIM_LIMIT = 8;

type PlanNode = { "Node Type": string; "Relation Name"?: string; Operation?: string; Plans?: PlanNode[] };
type Explained = { Plan: PlanNode & Record<string, number>; "Execution Time": number };

/** Days [fromDay, toDay) before now of audit detail and finished attempts, written as the engine would have. */
async function writeHistory(pool: Pool, fromDay: number, toDay: number): Promise<void> {
  const finished = await createSingleStepWorkflows(pool, (toDay - fromDay) * ATTEMPTS_PER_DAY, { adapter: "claim-history-done", operation: "deliver", stepClass: "external" });
  await pool.query(
    `WITH done AS (
       UPDATE step SET state = 'completed' WHERE id = ANY($1::uuid[]) RETURNING id, workflow_id
     )
     INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, input_digest, deadline_at, created_at,
                          checkpoint, outcome, ended_at, policy_version, expires_at, end_reason)
     SELECT fl_uuid_v7(t), id, workflow_id, 1, 1, gen_random_uuid(), 'execute', 'digest', t + interval '1 minute', t, 'receipt_committed', 'effect', t, 1, t + interval '30 seconds', 'receipt'
     FROM (SELECT id, workflow_id, now() - interval '${fromDay} days' - (row_number() OVER ())::float8 / ${ATTEMPTS_PER_DAY} * interval '1 day' AS t FROM done) d`,
    [finished],
  );
  const events = (toDay - fromDay) * LEASE_EVENTS_PER_DAY;
  const at = (n: string, per: number) => `now() - interval '${fromDay} days' - (${n})::float8 / ${per} * interval '1 day'`;
  await pool.query(
    `INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, expires_at, at)
     SELECT gen_random_uuid(), 1 + n % 3, 1, gen_random_uuid(), (ARRAY['acquired', 'renewed', 'renewed', 'released'])[1 + n % 4]::lease_event_kind,
            ${at("n", LEASE_EVENTS_PER_DAY)}, ${at("n", LEASE_EVENTS_PER_DAY)}
     FROM generate_series(0, ${events - 1}) n`,
  );
  const others = events / 10;
  const per = LEASE_EVENTS_PER_DAY / 10;
  await pool.query(
    `INSERT INTO late_observation (step_id, fencing_term, epoch, operation, at)
     SELECT gen_random_uuid(), 1, 1, 'commit_receipt', ${at("n", per)} FROM generate_series(0, ${others - 1}) n`,
  );
  await pool.query(
    `INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner, current_term, current_epoch, reason, at)
     SELECT gen_random_uuid(), 'commit_receipt', 1, 1, gen_random_uuid(), 2, 1, 'superseded', ${at("n", per)} FROM generate_series(0, ${others - 1}) n`,
  );
  await pool.query(
    `INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence, observed_expires_at, decided_at, decided_by)
     SELECT gen_random_uuid(), gen_random_uuid(), 1, 1, 'lease_expired', 'make_ready', '{}', ${at("n", per)}, ${at("n", per)}, 'test'
     FROM generate_series(0, ${others - 1}) n`,
  );
}

const HISTORY_TABLES = ["lease_event", "late_observation", "fencing_rejection", "recovery_decision"];

/** How the plan touches history: each node on a history table or one of its partitions. */
const historyAccessOf = (node: PlanNode): string[] => [
  ...(HISTORY_TABLES.some((table) => node["Relation Name"]?.startsWith(table)) ? [`${node["Node Type"]} ${node.Operation ?? ""} ${node["Relation Name"]}`.replace(/_\d{4}_\d{2}$/, "_<month>")] : []),
  ...(node.Plans ?? []).flatMap(historyAccessOf),
];

const buffersOf = (plan: Record<string, number>) =>
  plan["Shared Hit Blocks"]! + plan["Shared Read Blocks"]! + plan["Shared Dirtied Blocks"]! + plan["Shared Written Blocks"]!;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The claim of CLAIM_LIMIT steps, explained with its buffers and run, then rolled back: SAMPLES times. */
async function measureClaim(pool: Pool, session: string, adapter: string) {
  const statement = claimReadySteps(CLAIM_LIMIT);
  const [served] = servedFor(adapter);
  // Tables as autovacuum would leave them (the history's steps were completed by an update, whose
  // dead index entries a claim would otherwise step over), so both sizes plan from settled figures.
  await pool.query("VACUUM ANALYZE");
  const samples: { history: string; buffers: number; ms: number; claimed: number }[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ "QUERY PLAN": Explained[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, [session, [served!.kind], [served!.version]]);
      const explained = rows[0]!["QUERY PLAN"][0]!;
      samples.push({ history: historyAccessOf(explained.Plan).join("; "), buffers: buffersOf(explained.Plan), ms: explained["Execution Time"], claimed: explained.Plan["Actual Rows"]! });
      await client.query("ROLLBACK; BEGIN");
    });
  }
  return { history: new Set(samples.map((s) => s.history)), buffers: median(samples.map((s) => s.buffers)), ms: median(samples.map((s) => s.ms)), claimed: median(samples.map((s) => s.claimed)) };
}

test("the claim's plan and buffers are the same with 10× the history", { timeout: 300_000 }, async ({ db }) => {
  const adapter = "claim-history";
  await createSingleStepWorkflows(db.pool, 200, { adapter, operation: "deliver", stepClass: "external" });
  const session = await registerSession(db.pool, "direct");
  await ensureHistoryPartitions(db.pool, new Date(Date.now() - 301 * 86_400_000));

  await writeHistory(db.pool, 0, 30);
  const once = await measureClaim(db.pool, session, adapter);
  await writeHistory(db.pool, 30, 300);
  const tenfold = await measureClaim(db.pool, session, adapter);

  const { rows } = await db.pool.query<{ events: string; attempts: string }>(
    "SELECT (SELECT count(*) FROM lease_event) AS events, (SELECT count(*) FROM attempt WHERE ended_at IS NOT NULL) AS attempts",
  );
  expect(Number(rows[0]!.events)).toBe(300 * LEASE_EVENTS_PER_DAY);
  expect(Number(rows[0]!.attempts)).toBe(300 * ATTEMPTS_PER_DAY);
  expect(once.claimed).toBe(CLAIM_LIMIT);
  expect(tenfold.claimed).toBe(CLAIM_LIMIT);
  // History is neither read nor written, at both sizes.
  expect([...once.history]).toEqual([""]);
  expect([...tenfold.history]).toEqual([...once.history]);
  // Ten times the history may deepen an index or turn the step update's scan into a bitmap scan
  // (a few buffers either way); a claim that read history would grow with it, by hundreds.
  expect(tenfold.buffers).toBeLessThanOrEqual(Math.ceil(once.buffers * 1.1));
  console.log(
    `claim of ${CLAIM_LIMIT}: 1× history (${30 * LEASE_EVENTS_PER_DAY} lease events, ${30 * ATTEMPTS_PER_DAY} finished attempts) ${once.buffers} buffers, ${once.ms.toFixed(2)} ms; ` +
      `10× (${300 * LEASE_EVENTS_PER_DAY}, ${300 * ATTEMPTS_PER_DAY}) ${tenfold.buffers} buffers, ${tenfold.ms.toFixed(2)} ms (medians of ${SAMPLES})`,
  );
});
