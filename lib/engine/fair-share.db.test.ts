/**
 * Fair share at the claim (invariant 14): keys take turns, so a key with ready work is served
 * within a bounded number of claims however much another key has queued; a higher priority is
 * claimed first; and no key ever has more steps admitted (ready, leased or waiting) than its
 * kind's limit, the rest waiting behind their key without a lease until one of its steps ends.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { queuedAdmission } from "./admission";
import { claimSteps } from "./lease";
import { commitReceipts } from "./receipt";
import { registerSession } from "./session";
import { truncateEngineTables } from "./test-support";
import type { ClaimedStep } from "./types";
import { createWorkflows, type WorkflowDraft } from "./workflow";

const KIND = "fair-test";
const served = [{ kind: KIND, version: 1 }];

const draft = (n: number, options: { key?: string | null; priority?: number } = {}): WorkflowDraft => ({
  kind: KIND,
  input: { n },
  requester: "test",
  concurrencyKey: options.key ?? null,
  priority: options.priority,
  steps: [{ name: "only", adapter: "pure", stepClass: "pure" }],
});

async function create(pool: Pool, drafts: readonly WorkflowDraft[]): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; offset < drafts.length; offset += 500) {
    for (const created of await createWorkflows(pool, drafts.slice(offset, offset + 500))) ids.push(created.stepIds.get("only")!);
  }
  return ids;
}

async function keyOfSteps(pool: Pool, stepIds: readonly string[]): Promise<Map<string, string | null>> {
  const { rows } = await pool.query<{ id: string; key: string | null }>("SELECT id, concurrency_key AS key FROM step WHERE id = ANY($1::uuid[])", [stepIds]);
  return new Map(rows.map((row) => [row.id, row.key]));
}

/** An admin's override of the kind's fair share, as lib/fair-share/settings.ts writes it. */
async function override(pool: Pool, settings: { limitPerKey: number | null; fairness: "round-robin" | "oldest-first" }): Promise<void> {
  await pool.query(
    `INSERT INTO fair_share_override (kind, limit_per_key, fairness, reason, set_by) VALUES ($1, $2, $3, 'test', 'test')
     ON CONFLICT (kind) DO UPDATE SET limit_per_key = excluded.limit_per_key, fairness = excluded.fairness`,
    [KIND, settings.limitPerKey, settings.fairness],
  );
}

test.beforeEach(async ({ db }) => {
  await truncateEngineTables(db.pool);
  await db.pool.query("DELETE FROM fair_share_override");
});

const SMALL_KEYS = 9;
const SMALL_STEPS = 10;

/**
 * Claims `batch` at a time until every step in `wanted` is claimed. Returns, per step claimed, how
 * many steps had been claimed once its claim was done (a statement's rows come back in no
 * particular order, so a step's place within its own claim is not known).
 */
async function claimUntil(pool: Pool, wanted: ReadonlySet<string>, batch: number, maxClaims: number): Promise<Map<string, number>> {
  const session = await registerSession(pool, "direct");
  const claimedBy = new Map<string, number>();
  const left = new Set(wanted);
  while (left.size > 0 && claimedBy.size < maxClaims) {
    const claimed: ClaimedStep[] = await claimSteps(pool, session, served, batch);
    if (claimed.length === 0) break;
    const through = claimedBy.size + claimed.length;
    for (const step of claimed) {
      claimedBy.set(step.stepId, through);
      left.delete(step.stepId);
    }
  }
  return claimedBy;
}

test("one key with 10,000 ready steps and nine with 10: each small key's j-th step is among the first 10·(j+1) claimed", { timeout: 240_000 }, async ({ db }) => {
  await create(db.pool, Array.from({ length: 10_000 }, (_, n) => draft(n, { key: "big" })));
  const small = await create(
    db.pool,
    Array.from({ length: SMALL_KEYS * SMALL_STEPS }, (_, n) => draft(n, { key: `small-${n % SMALL_KEYS}` })),
  );
  const keys = await keyOfSteps(db.pool, small);

  // Claims of 7, so the turns do not line up with claim boundaries.
  const index = await claimUntil(db.pool, new Set(small), 7, 10_090);
  const keyCount = SMALL_KEYS + 1;
  const seen = new Map<string, number>();
  const late: string[] = [];
  // Every small key's steps in the order they were claimed: its j-th step within the bound.
  for (const id of [...small].sort((a, b) => index.get(a)! - index.get(b)!)) {
    const key = keys.get(id)!;
    const j = (seen.get(key) ?? 0) + 1;
    seen.set(key, j);
    const bound = keyCount * (j + 1);
    if (index.get(id)! > bound) late.push(`${key}'s step ${j} was claim ${index.get(id)}, bound ${bound}`);
  }
  expect(late).toEqual([]);
  expect(Math.max(...small.map((id) => index.get(id)!))).toBeLessThanOrEqual(keyCount * (SMALL_STEPS + 1));
  console.log(`fair share: the 90 small steps were claimed by claim ${Math.max(...small.map((id) => index.get(id)!))} of 10,090 (bound ${keyCount * (SMALL_STEPS + 1)})`);
});

test("with fairness off (oldest first) the small keys wait behind the big key's backlog", { timeout: 120_000 }, async ({ db }) => {
  await override(db.pool, { limitPerKey: null, fairness: "oldest-first" });
  const big = await create(db.pool, Array.from({ length: 1_000 }, (_, n) => draft(n, { key: "big" })));
  const small = await create(db.pool, Array.from({ length: 20 }, (_, n) => draft(n, { key: `small-${n % 2}` })));
  const index = await claimUntil(db.pool, new Set(small), 50, 1_020);
  expect(Math.max(...big.map((id) => index.get(id)!))).toBe(1_000);
  expect(Math.min(...small.map((id) => index.get(id)!))).toBeGreaterThan(1_000);
});

test("a higher priority is claimed first, whatever its key and age; within a priority a new key does not wait behind another's backlog", async ({ db }) => {
  const backlog = await create(db.pool, Array.from({ length: 30 }, (_, n) => draft(n, { key: "a" })));
  const [newcomer] = await create(db.pool, [draft(50, { key: "b" })]);
  const urgent = await create(db.pool, [draft(100, { key: "a", priority: 9 }), draft(101, { key: "c", priority: 9 })]);
  const low = await create(db.pool, [draft(200, { key: "d", priority: 1 })]);
  // Claims of 2: the urgent pair is the first claim; the newcomer, a second key's first request,
  // within 2 keys · (1 + 1) claims after it (the bound of the first test); the low one is last.
  const index = await claimUntil(db.pool, new Set([...backlog, newcomer!, ...urgent, ...low]), 2, 40);
  expect(index.size).toBe(34);
  expect(urgent.map((id) => index.get(id))).toEqual([2, 2]);
  expect(index.get(newcomer!)).toBeLessThanOrEqual(2 + 2 * 2);
  expect(index.get(low[0]!)).toBe(34);
});

test("a key never has more steps admitted than its kind's limit; the rest wait behind it without a lease until one ends", async ({ db }) => {
  await override(db.pool, { limitPerKey: 2, fairness: "round-robin" });
  const a = await create(db.pool, Array.from({ length: 5 }, (_, n) => draft(n, { key: "a" })));
  const [b] = await create(db.pool, [draft(10, { key: "b" })]);
  const unkeyed = await create(db.pool, [draft(20)]);

  const { rows: queued } = await db.pool.query<{ id: string; reason: string }>(
    "SELECT id, state_reason AS reason FROM step WHERE next_eligible_at = 'infinity' AND state = 'ready' ORDER BY fair_position",
  );
  expect(queued.map((row) => row.id)).toEqual(a.slice(2));
  expect(queued[0]!.reason).toMatch(/queued behind concurrency key a: 2 steps in flight/);

  const session = await registerSession(db.pool, "direct");
  const claimed = await claimSteps(db.pool, session, served, 10);
  expect(new Set(claimed.map((step) => step.stepId))).toEqual(new Set([...a.slice(0, 2), b, ...unkeyed]));
  expect(await claimSteps(db.pool, session, served, 10)).toEqual([]);

  // One of a's steps ends: the next queued one is admitted by the same statement, and claimable.
  const first = claimed.find((step) => step.stepId === a[0])!;
  await commitReceipts(db.pool, session, [{ lease: { stepId: first.stepId, fencingTerm: first.fencingTerm, sessionId: session }, conclusion: { kind: "no_action_needed", reason: "test" } }]);
  const next = await claimSteps(db.pool, session, served, 10);
  expect(next.map((step) => step.stepId)).toEqual([a[2]]);
  const { rows: slots } = await db.pool.query<{ key: string; n: number }>("SELECT key, count(*)::int AS n FROM concurrency_slot GROUP BY key ORDER BY key");
  expect(slots).toEqual([{ key: "a", n: 2 }, { key: "b", n: 1 }]);
});

test("a raised limit admits queued steps at the next admission pass, without any step ending", async ({ db }) => {
  await override(db.pool, { limitPerKey: 1, fairness: "round-robin" });
  const a = await create(db.pool, Array.from({ length: 4 }, (_, n) => draft(n, { key: "a" })));
  const queuedCount = async () => Number((await db.pool.query("SELECT count(*) AS n FROM step WHERE next_eligible_at = 'infinity'")).rows[0].n);
  expect(await queuedCount()).toBe(3);
  await override(db.pool, { limitPerKey: 3, fairness: "round-robin" });
  const pass = queuedAdmission(db.pool);
  expect(await pass()).toBe(2);
  expect(await queuedCount()).toBe(1);
  const session = await registerSession(db.pool, "direct");
  expect(new Set((await claimSteps(db.pool, session, served, 10)).map((step) => step.stepId))).toEqual(new Set(a.slice(0, 3)));
  // Removing the limit admits the rest.
  await override(db.pool, { limitPerKey: null, fairness: "round-robin" });
  expect(await pass()).toBe(1);
  expect(await queuedCount()).toBe(0);
});
