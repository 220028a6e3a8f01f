/**
 * The noisy neighbour: one concurrency key floods the queue with 10,000 requests, then nine
 * other keys send 10 each, all before the workers start; the same run with fairness on (keys
 * take turns, the default) and off (the kind's fairness overridden to oldest first). Reported:
 * each small key's time to completion (its last step's receipt) and the big key's total time,
 * from the first claim, on the database clock. Fenceline's direct transport, the throughput
 * part's worker settings, no-op steps; the two modes alternate over the rounds, each in a fresh
 * database.
 */
import { createPool } from "@/lib/db/pool";
import { createWorkflows } from "@/lib/engine/workflow";
import { setUpEngine } from "./engines";
import { percentile, round, sleep } from "./stats";
import { benchDraft } from "./workflows";

export type NoisyNeighbourShape = { readonly bigRequests: number; readonly smallKeys: number; readonly smallRequests: number };
export const NOISY_NEIGHBOUR: NoisyNeighbourShape = { bigRequests: 10_000, smallKeys: 9, smallRequests: 10 };

export type NoisyNeighbourRun = {
  readonly fairness: "on" | "off";
  /** Each small key's time to completion, ms from the first claim, by key. */
  readonly smallKeyMs: Record<string, number>;
  readonly smallKeyMedianMs: number;
  readonly smallKeyMaxMs: number;
  /** The big key's last completion, ms from the first claim: the whole run. */
  readonly bigKeyMs: number;
};

const ENQUEUE_BATCH = 500;
const TIMEOUT_MS = 10 * 60_000;
const BIG_KEY = "tenant-big";

async function runOnce(fairness: "on" | "off", shape: NoisyNeighbourShape, log: (line: string) => void): Promise<NoisyNeighbourRun> {
  const setup = await setUpEngine("fencelineDirect");
  try {
    if (fairness === "off") {
      // The admin's override (lib/fair-share/settings.ts), written before any request: positions are taken at creation.
      await setup.pool.query(
        "INSERT INTO fair_share_override (kind, limit_per_key, fairness, reason, set_by) VALUES ('bench', NULL, 'oldest-first', 'noisy neighbour: fairness off', 'bench')",
      );
    }
    const drafts = [
      ...Array.from({ length: shape.bigRequests }, (_, n) => ({ ...benchDraft({ n }), concurrencyKey: BIG_KEY })),
      ...Array.from({ length: shape.smallKeys * shape.smallRequests }, (_, n) => ({ ...benchDraft({ n }), concurrencyKey: `tenant-${1 + (n % shape.smallKeys)}` })),
    ];
    const pool = createPool(setup.databaseUrl, { applicationName: "bench-enqueue", max: 1 });
    try {
      for (let offset = 0; offset < drafts.length; offset += ENQUEUE_BATCH) await createWorkflows(pool, drafts.slice(offset, offset + ENQUEUE_BATCH));
    } finally {
      await pool.end();
    }
    await setup.pool.query("ANALYZE");

    const children = await setup.startWorkers();
    const deadline = performance.now() + TIMEOUT_MS;
    let completed = 0;
    while (completed < drafts.length && performance.now() < deadline) {
      await sleep(100);
      completed = await setup.completed();
    }
    for (const child of [...children].reverse()) await child.stop();
    if (completed < drafts.length) throw new Error(`noisy neighbour (fairness ${fairness}): ${completed} of ${drafts.length} completed in ${TIMEOUT_MS / 1000} s`);

    const { rows } = await setup.pool.query<{ key: string; done_ms: number }>(
      `WITH origin AS (SELECT min(created_at) AS at FROM attempt)
       SELECT s.concurrency_key AS key, extract(epoch FROM max(r.created_at) - (SELECT at FROM origin)) * 1000 AS done_ms
       FROM receipt r JOIN step s ON s.id = r.step_id
       GROUP BY s.concurrency_key`,
    );
    const byKey = new Map(rows.map((row) => [row.key, Number(row.done_ms)]));
    const smallKeyMs = Object.fromEntries([...byKey].filter(([key]) => key !== BIG_KEY).map(([key, ms]) => [key, round(ms, 0)]));
    const small = Object.values(smallKeyMs);
    const run: NoisyNeighbourRun = {
      fairness,
      smallKeyMs,
      smallKeyMedianMs: round(percentile(small, 50), 0),
      smallKeyMaxMs: round(Math.max(...small), 0),
      bigKeyMs: round(byKey.get(BIG_KEY)!, 0),
    };
    log(`  fairness ${fairness}: small keys done after ${run.smallKeyMedianMs} ms (median of ${small.length}), ${run.smallKeyMaxMs} ms (last); big key ${run.bigKeyMs} ms`);
    return run;
  } finally {
    await setup.drop();
  }
}

export type NoisyNeighbourResult = {
  readonly shape: NoisyNeighbourShape;
  readonly runs: readonly NoisyNeighbourRun[];
  /** Medians over the rounds, per mode. */
  readonly on: { readonly smallKeyMedianMs: number; readonly smallKeyMaxMs: number; readonly bigKeyMs: number };
  readonly off: { readonly smallKeyMedianMs: number; readonly smallKeyMaxMs: number; readonly bigKeyMs: number };
};

/** `rounds` pairs, fairness on and off alternating (who goes first alternates too). */
export async function measureNoisyNeighbour(rounds: number, log: (line: string) => void, shape: NoisyNeighbourShape = NOISY_NEIGHBOUR): Promise<NoisyNeighbourResult> {
  const runs: NoisyNeighbourRun[] = [];
  for (let r = 0; r < rounds; r += 1) {
    for (const fairness of r % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) {
      log(`noisy neighbour, fairness ${fairness} (round ${r + 1}/${rounds}): ${shape.bigRequests} requests on one key, then ${shape.smallRequests} on each of ${shape.smallKeys} others`);
      runs.push(await runOnce(fairness, shape, log));
    }
  }
  const medians = (mode: "on" | "off") => {
    const of = runs.filter((run) => run.fairness === mode);
    return {
      smallKeyMedianMs: round(percentile(of.map((run) => run.smallKeyMedianMs), 50), 0),
      smallKeyMaxMs: round(percentile(of.map((run) => run.smallKeyMaxMs), 50), 0),
      bigKeyMs: round(percentile(of.map((run) => run.bigKeyMs), 50), 0),
    };
  };
  return { shape, runs, on: medians("on"), off: medians("off") };
}
