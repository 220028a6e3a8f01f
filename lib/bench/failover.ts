/**
 * The failover row (decision 015): the scenario harness's failover cells, run as measurements.
 * Per tier (quick: the harness's `pg_ctl promote`; Patroni: two Patroni agents and etcd) and
 * replication mode, each round runs one cell against the fenced destination, the four cells
 * alternating within a round so the machine's load falls on all of them alike. A row is the
 * median over the rounds of: the write pause (last write acknowledged before the kill → first
 * after), the promotion (kill → the standby takes writes: Patroni's detection and promotion in
 * its tier), kill → the first fencing term of the new epoch, requests lost, and stale writes the
 * destination rejected. The cells' own invariants still decide: a failed cell is listed with the
 * command that replays it.
 */
import { deriveSeed, openEnvironment, replayCommand, runCell } from "@/lib/scenarios/matrix";
import type { FailoverFigures } from "@/lib/scenarios/failover";
import { failoverTier, isSynchronousFailover, type FaultKind } from "@/lib/scenarios/types";
import { percentile, round } from "./stats";

/** One tier and replication mode: medians over the rounds (null when no cell of it passed). */
export type FailoverRow = {
  readonly tier: "quick" | "patroni";
  readonly replication: "synchronous" | "asynchronous";
  /** Cells run, and those whose invariants and failover findings held. */
  readonly rounds: number;
  readonly passed: number;
  readonly writePauseMs: number | null;
  readonly promotionMs: number | null;
  readonly firstTermInNewEpochAfterKillMs: number | null;
  readonly requestsLost: number | null;
  readonly staleWritesRejected: number | null;
  /** Replay commands of the cells that failed. */
  readonly failed: string[];
};

const CELLS: readonly FaultKind[] = ["failover-sync", "failover-async", "failover-patroni-sync", "failover-patroni-async"];
const BENCH_SEED = 20261204;

/** `rounds` rounds of the four failover cells against the fenced destination; one row per tier and mode. */
export async function measureFailover(rounds: number, log: (line: string) => void): Promise<FailoverRow[]> {
  const environment = await openEnvironment();
  const runs = new Map<FaultKind, { figures: FailoverFigures | null; staleWritesRejected: number; passed: boolean; replay: string }[]>(CELLS.map((fault) => [fault, []]));
  try {
    for (let r = 0; r < rounds; r += 1) {
      for (const fault of CELLS) {
        log(`failover ${fault} × fenced (round ${r + 1}/${rounds})`);
        const seed = deriveSeed(BENCH_SEED, "bench", String(r));
        const cell = await runCell(environment, fault, "fenced", seed, log).catch((error: unknown) => {
          // The servers did not start: the round has no figures for this cell, the others go on.
          log(`  FAILED to start: ${error instanceof Error ? error.message : String(error)}`);
          return null;
        });
        if (!cell) {
          runs.get(fault)!.push({ figures: null, staleWritesRejected: 0, passed: false, replay: replayCommand(fault, "fenced", seed) });
          continue;
        }
        const figures = (cell.detail.failover as FailoverFigures | undefined) ?? null;
        runs.get(fault)!.push({ figures, staleWritesRejected: cell.staleWritesRejected, passed: cell.passed, replay: cell.replay });
        if (!cell.passed) log(`  FAILED: ${cell.failures[0]?.split("\n")[0] ?? "?"}; replay: ${cell.replay}`);
        else log(`  write pause ${figures?.writePauseMs} ms, promotion ${figures?.promotionMs} ms, first term of the new epoch ${figures?.firstTermInNewEpochAfterKillMs} ms after the kill, lost ${figures?.lostRequests}`);
      }
    }
  } finally {
    await environment.close();
  }
  return CELLS.map((fault) => {
    const cells = runs.get(fault)!;
    // Figures of passed cells only: a failed one may have stopped anywhere.
    const measured = cells.flatMap((cell) => (cell.passed && cell.figures ? [{ ...cell.figures, staleWritesRejected: cell.staleWritesRejected }] : []));
    const median = (pick: (figures: (typeof measured)[number]) => number | null) => {
      const values = measured.map(pick).filter((value): value is number => value !== null);
      return values.length === 0 ? null : round(percentile(values, 50), 0);
    };
    return {
      tier: failoverTier(fault),
      replication: isSynchronousFailover(fault) ? "synchronous" : "asynchronous",
      rounds: cells.length,
      passed: cells.filter((cell) => cell.passed).length,
      writePauseMs: median((f) => f.writePauseMs),
      promotionMs: median((f) => f.promotionMs),
      firstTermInNewEpochAfterKillMs: median((f) => f.firstTermInNewEpochAfterKillMs),
      requestsLost: median((f) => f.lostRequests),
      staleWritesRejected: median((f) => f.staleWritesRejected),
      failed: cells.filter((cell) => !cell.passed).map((cell) => cell.replay),
    };
  });
}
