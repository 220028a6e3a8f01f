/** Small statistics and database-counter helpers shared by the measurements. */
import type pg from "pg";

/** Nearest-rank percentile of `values` (0 < p <= 100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const round = (value: number, digits = 1): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type DatabaseCounters = { xactCommit: number; tupInserted: number; tupUpdated: number; tupDeleted: number };

/** This database's cumulative counters from pg_stat_database (flushed by backends as they go). */
export async function databaseCounters(pool: pg.Pool): Promise<DatabaseCounters> {
  const { rows } = await pool.query<{ xact_commit: string; tup_inserted: string; tup_updated: string; tup_deleted: string }>(
    "SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()",
  );
  const row = rows[0]!;
  return {
    xactCommit: Number(row.xact_commit),
    tupInserted: Number(row.tup_inserted),
    tupUpdated: Number(row.tup_updated),
    tupDeleted: Number(row.tup_deleted),
  };
}

export function counterDelta(before: DatabaseCounters, after: DatabaseCounters): DatabaseCounters {
  return {
    xactCommit: after.xactCommit - before.xactCommit,
    tupInserted: after.tupInserted - before.tupInserted,
    tupUpdated: after.tupUpdated - before.tupUpdated,
    tupDeleted: after.tupDeleted - before.tupDeleted,
  };
}
