/**
 * Figures across cells: one JSON summary (the `--json` last line) and a readable table.
 */
import type { CellResult, LatencySummary } from "./types";

/** Nearest-rank percentile of sorted samples. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function summarizeLatency(samples: readonly number[], bound: number): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? null, bound };
}

export type Summary = {
  runs: number;
  passed: boolean;
  seed: number;
  mode: "matrix" | "soak";
  durationMs: number;
  faultsInjected: Record<string, number>;
  staleWritesRejected: number;
  staleWritesAccepted: number;
  duplicateEffects: number;
  lostRequests: number;
  unknownOutsideReview: number;
  workflows: number;
  recoveryLatencyMs: LatencySummary;
  failedCells: { fault: string; contract: string; replay: string; failures: string[] }[];
  cells: ReturnType<typeof cellSummary>[];
};

/** Per-cell figures for the JSON: the headline numbers, plus details and witnesses only where useful. */
function cellSummary(cell: CellResult) {
  return {
    fault: cell.fault,
    contract: cell.contract,
    passed: cell.passed,
    seed: cell.seed,
    durationMs: cell.durationMs,
    workflows: cell.workflows,
    faultsInjected: cell.faultsInjected,
    staleWritesRejected: cell.staleWritesRejected,
    staleWritesAccepted: cell.staleWritesAccepted,
    duplicateEffects: cell.duplicateEffects,
    lostRequests: cell.lostRequests,
    unknownOutsideReview: cell.unknownOutsideReview,
    recoveryLatencyMs: cell.recoveryLatencyMs,
    invariants: Object.fromEntries(cell.invariants.map((invariant) => [invariant.id, invariant.passed])),
    detail: cell.detail,
    ...(cell.passed ? {} : { failures: cell.failures, replay: cell.replay }),
  };
}

export function summarize(cells: readonly CellResult[], options: { seed: number; mode: "matrix" | "soak"; durationMs: number; latencySamples: readonly number[]; bound: number }): Summary {
  const faultsInjected: Record<string, number> = {};
  for (const cell of cells) {
    for (const [kind, count] of Object.entries(cell.faultsInjected)) faultsInjected[kind] = (faultsInjected[kind] ?? 0) + count;
  }
  const sum = (pick: (cell: CellResult) => number) => cells.reduce((total, cell) => total + pick(cell), 0);
  return {
    runs: cells.length,
    passed: cells.length > 0 && cells.every((cell) => cell.passed),
    seed: options.seed,
    mode: options.mode,
    durationMs: options.durationMs,
    faultsInjected,
    staleWritesRejected: sum((cell) => cell.staleWritesRejected),
    staleWritesAccepted: sum((cell) => cell.staleWritesAccepted),
    duplicateEffects: sum((cell) => cell.duplicateEffects),
    lostRequests: sum((cell) => cell.lostRequests),
    unknownOutsideReview: sum((cell) => cell.unknownOutsideReview),
    workflows: sum((cell) => cell.workflows),
    recoveryLatencyMs: summarizeLatency(options.latencySamples, options.bound),
    failedCells: cells.filter((cell) => !cell.passed).map((cell) => ({ fault: cell.fault, contract: cell.contract, replay: cell.replay, failures: cell.failures })),
    cells: cells.map(cellSummary),
  };
}

const pad = (value: unknown, width: number) => String(value ?? "-").padEnd(width);
const padLeft = (value: unknown, width: number) => String(value ?? "-").padStart(width);

export function cellLine(cell: CellResult): string {
  const latency = cell.recoveryLatencyMs.samples > 0 ? `${cell.recoveryLatencyMs.p50}/${cell.recoveryLatencyMs.max}` : "-";
  const injected = Object.entries(cell.faultsInjected).map(([kind, n]) => `${kind}=${n}`).join(",");
  return [
    pad(cell.passed ? "PASS" : "FAIL", 5),
    pad(cell.fault, 15),
    pad(cell.contract, 11),
    padLeft(cell.workflows, 4),
    padLeft(cell.staleWritesRejected, 9),
    padLeft(cell.staleWritesAccepted, 9),
    padLeft(cell.duplicateEffects, 5),
    padLeft(cell.lostRequests, 5),
    padLeft(cell.unknownOutsideReview, 8),
    padLeft(latency, 11),
    padLeft(`${(cell.durationMs / 1000).toFixed(1)}s`, 7),
    `  ${injected}`,
  ].join(" ");
}

export const tableHeader = [
  pad("", 5), pad("fault", 15), pad("contract", 11), padLeft("wf", 4), padLeft("stale-rej", 9), padLeft("stale-acc", 9),
  padLeft("dups", 5), padLeft("lost", 5), padLeft("unk-out", 8), padLeft("rec p50/max", 11), padLeft("time", 7), "  faults injected",
].join(" ");

export function renderTable(summary: Summary, cells: readonly CellResult[]): string {
  const lines = [tableHeader, ...cells.map(cellLine), ""];
  const latency = summary.recoveryLatencyMs;
  lines.push(
    `${summary.runs} cell(s), ${summary.workflows} workflows, seed ${summary.seed}, ${(summary.durationMs / 1000).toFixed(1)} s`,
    `faults injected: ${Object.entries(summary.faultsInjected).map(([kind, n]) => `${kind} ${n}`).join(", ") || "none"}`,
    `stale writes rejected ${summary.staleWritesRejected}, accepted ${summary.staleWritesAccepted}; duplicate effects ${summary.duplicateEffects}; ` +
      `lost requests ${summary.lostRequests}; unknown outside review ${summary.unknownOutsideReview}`,
    `recovery latency (ms, DB clock): p50 ${latency.p50 ?? "-"}, p99 ${latency.p99 ?? "-"}, max ${latency.max ?? "-"} over ${latency.samples} sample(s); bound ${latency.bound}`,
  );
  for (const cell of cells.filter((c) => !c.passed)) {
    lines.push("", `FAILED ${cell.fault} × ${cell.contract} (seed ${cell.seed})`, ...cell.failures.map((failure) => `  - ${failure}`), `  replay: ${cell.replay}`);
  }
  lines.push("", summary.passed ? "all cells passed" : `${summary.failedCells.length} cell(s) failed`);
  return lines.join("\n");
}
