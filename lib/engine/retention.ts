/**
 * The retention job, on history partitioned by month (decision 017): it creates the months ahead
 * (so a claim's insert always lands in a small partition of its own month) and drops whole months
 * of audit detail (lease events, fencing rejections, late observations, recovery decisions) once
 * they are older than the policy allows, unless a step that is not settled for good still has
 * evidence in them. Dropping a partition deletes no rows: no dead tuples, no vacuum, little WAL.
 */
import type { Pool } from "pg";
import { inTransaction, run } from "./db";
import * as sql from "./sql/retention";
import { FINAL_STEP_STATES } from "./vocabulary";

export type RetentionPolicy = {
  /** Audit detail younger than this is kept; a month goes once its last day is older. */
  readonly keepMs: number;
};

/** One expired month of one history table: dropped, or kept because unsettled steps need it. */
export type ExpiredPartition = {
  readonly table: string;
  readonly partition: string;
  readonly rows: number;
  /** Steps not settled for good (running, waiting, under review) with rows in it; 0 when dropped. */
  readonly heldBySteps: number;
  readonly dropped: boolean;
};

/** Months created ahead of now: maintenance may lapse this long before rows land in a default partition. */
export const MONTHS_AHEAD = 2;

/**
 * DDL on a partitioned table takes a lock that briefly queues claims behind it; waiting longer
 * than this gives up instead, and the next run tries again.
 */
const LOCK_TIMEOUT = "2s";

/** Creates the history partitions from `from`'s month (default: now) through MONTHS_AHEAD months ahead. */
export async function ensureHistoryPartitions(pool: Pool, from?: Date): Promise<string[]> {
  return inTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const { rows } = await client.query<{ now: Date }>("SELECT now()");
    const now = rows[0]!.now;
    const through = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD, 1));
    const created = await run<{ created: string }>(client, sql.ensureHistoryPartitions, [from ?? now, through]);
    return created.map((row) => row.created);
  });
}

/** Drops the expired months of audit detail that no unsettled step needs; returns every expired month. */
export async function dropExpiredHistory(pool: Pool, policy: RetentionPolicy): Promise<ExpiredPartition[]> {
  return inTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const rows = await run<{ table_name: string; partition_name: string; rows: number; held_by_steps: number; dropped: boolean }>(
      client,
      sql.dropExpiredHistoryPartitions,
      [policy.keepMs, FINAL_STEP_STATES],
    );
    return rows.map((row) => ({ table: row.table_name, partition: row.partition_name, rows: row.rows, heldBySteps: row.held_by_steps, dropped: row.dropped }));
  });
}

/** Refreshes the history parents' statistics, which autovacuum leaves alone; after maintenance. */
export async function analyzeHistory(pool: Pool): Promise<void> {
  await pool.query(sql.analyzeHistory);
}
