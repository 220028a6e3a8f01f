/**
 * Recovery latency after SIGKILL: one of two real `npm run worker` processes (default settings)
 * claims a `pure` step whose handler sleeps, and is killed 200 ms later. The other worker, already
 * running, must see the lease expire (step class `pure`: TTL 5 s), decide in its recovery scan
 * (every ~1 s by default) and claim the step again. The figure is the time from the kill to that
 * claim of the next fencing term.
 *
 * The peers are not re-run here: at their defaults they recover only after a fixed bound that
 * exceeds any benchmark run, so their documented bound is reported instead (see
 * ../shared/research/perf-anchors.md, section 4).
 */
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { createPool } from "@/lib/db/pool";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { createWorkflows } from "@/lib/engine/workflow";
import { benchDraft } from "./workflows";
import { spawnWorker, stopAll } from "@/lib/worker/test-process";
import { round, sleep } from "./stats";
import pg from "pg";

export type RecoveryResult = {
  readonly fencelineMs: number;
  readonly leaseTtlMs: number;
  readonly scanIntervalMs: number;
  /** Documented bounds of the peers at their defaults, in ms (not measured). */
  readonly graphileDefaultBoundMs: number;
  readonly pgBossDefaultBoundMs: number;
};

const DATABASE = "fl_bench_recovery";
const KILL_AFTER_MS = 200;
/** Worker default (lib/cli/worker.ts: FENCELINE_RECOVERY_INTERVAL_MS). */
const SCAN_INTERVAL_MS = 1_000;
/** graphile-worker: locked_at older than 4 h is reset (hard-coded), swept every 8-10 min. */
const GRAPHILE_BOUND_MS = 4 * 3_600_000 + 10 * 60_000;
/** pg-boss: expireInSeconds 900, then a supervise pass (60 s). */
const PG_BOSS_BOUND_MS = 900_000 + 60_000;

export async function measureRecovery(): Promise<RecoveryResult> {
  const { url } = await resolveDatabaseUrl({ database: DATABASE, fresh: true });
  await deployMigrations(url);
  const pool = createPool(url, { applicationName: "bench-harness", max: 2 });
  const trace = { FENCELINE_TRACE_CHECKPOINTS: "1", FENCELINE_PROCESS: "bench-recovery", FENCELINE_DEFINITIONS: "lib/bench/workflows.ts" };
  // Both workers run before the step exists; whichever claims it is the one killed.
  const workers = [spawnWorker(url, trace), spawnWorker(url, trace)];
  try {
    const { rows } = await pool.query<{ lease_ttl_ms: number }>("SELECT lease_ttl_ms FROM step_class WHERE name = 'pure'");
    const leaseTtlMs = rows[0]!.lease_ttl_ms;
    await Promise.all(workers.map((worker) => worker.waitForLine(/^FENCELINE_WORKER_READY /)));
    const [created] = await createWorkflows(pool, [benchDraft({ ms: 600_000 }, "bench-sleep")]);
    const stepId = created!.stepIds.get("only")!;
    const claimedBy = await Promise.race(
      workers.map((worker, index) => worker.waitForLine(new RegExp(`^FENCELINE_CHECKPOINT claimed ${stepId} 1$`)).then(() => index)),
    );
    const victim = workers[claimedBy]!;
    const survivor = workers[1 - claimedBy]!;
    await sleep(KILL_AFTER_MS);
    victim.process.kill("SIGKILL");
    const killedAt = performance.now();
    await survivor.waitForLine(new RegExp(`^FENCELINE_CHECKPOINT claimed ${stepId} 2$`), 60_000);
    const fencelineMs = performance.now() - killedAt;
    return {
      fencelineMs: round(fencelineMs, 0),
      leaseTtlMs,
      scanIntervalMs: SCAN_INTERVAL_MS,
      graphileDefaultBoundMs: GRAPHILE_BOUND_MS,
      pgBossDefaultBoundMs: PG_BOSS_BOUND_MS,
    };
  } finally {
    await stopAll(workers.filter((worker) => worker.process.exitCode === null && worker.process.signalCode === null));
    await pool.end();
    const admin = new pg.Client({ connectionString: url.replace(/\/[^/?]+(\?|$)/, "/postgres$1") });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(DATABASE)} WITH (FORCE)`).finally(() => admin.end());
  }
}
