/**
 * The retention job, on history partitioned by month (decision 017): it creates the months ahead
 * (so a claim's insert always lands in a small partition of its own month) and drops whole months
 * of audit detail (lease events, fencing rejections, late observations, recovery decisions) once
 * they are older than the policy allows, unless a step that is not settled for good still has
 * evidence in them. Dropping a partition deletes no rows: no dead tuples, no vacuum, little WAL.
 * Attempts and receipts, kept forever, are partitioned by month too: an old settled month of them
 * is detached into the archive schema instead, where it stays queryable.
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

/**
 * Creates the partitions of the history tables, and of attempts and receipts, from `from`'s month
 * (default: now) through MONTHS_AHEAD months ahead.
 */
export async function ensureHistoryPartitions(pool: Pool, from?: Date): Promise<string[]> {
  return inTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const { rows } = await client.query<{ now: Date }>("SELECT now()");
    const now = rows[0]!.now;
    const through = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD, 1));
    const created = [
      ...(await run<{ created: string }>(client, sql.ensureHistoryPartitions, [from ?? now, through])),
      ...(await run<{ created: string }>(client, sql.ensureSafetyPartitions, [from ?? now, through])),
    ];
    return created.map((row) => row.created);
  });
}

/** One expired month of receipts or attempts: detached into the archive schema, or kept and why. */
export type ExpiredSafetyPartition = {
  readonly table: string;
  readonly partition: string;
  readonly rows: number;
  /** Steps not settled for good with rows in it; 0 when detached. */
  readonly heldBySteps: number;
  /** For attempts: receipts still attached that name one of its attempts; 0 when detached. */
  readonly referencedBy: number;
  readonly detached: boolean;
};

/** The schema detached months of attempts and receipts go to: the engine's, with `_archive`. */
export const archiveSchemaOf = (engineSchema: string): string => `${engineSchema}_archive`;

/**
 * Detaches the expired months of receipts and attempts that no unsettled step needs (receipts
 * first; attempts a still-attached receipt names stay) into the archive schema, never dropping
 * them: SPEC keeps both forever. Returns every expired month.
 */
export async function detachExpiredSafetyState(pool: Pool, policy: RetentionPolicy): Promise<ExpiredSafetyPartition[]> {
  return inTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const rows = await run<{ table_name: string; partition_name: string; rows: number; held_by_steps: number; referenced_by: number; detached: boolean }>(
      client,
      sql.detachExpiredSafetyPartitions,
      [policy.keepMs, FINAL_STEP_STATES],
    );
    return rows.map((row) => ({
      table: row.table_name,
      partition: row.partition_name,
      rows: row.rows,
      heldBySteps: row.held_by_steps,
      referencedBy: row.referenced_by,
      detached: row.detached,
    }));
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

/** What one run of the retention job did. */
export type RetentionReport = {
  /** Partitions created for the months ahead (and for rows found in a default partition). */
  readonly created: string[];
  /** Every expired month of audit detail, dropped or kept. */
  readonly expired: ExpiredPartition[];
  /** Every expired month of attempts and receipts, detached or kept. */
  readonly expiredSafetyState: ExpiredSafetyPartition[];
};

/** One run of the retention job: the months ahead, the expired months, the parents' statistics. */
export async function runRetention(pool: Pool, policy: RetentionPolicy): Promise<RetentionReport> {
  const created = await ensureHistoryPartitions(pool);
  const expired = await dropExpiredHistory(pool, policy);
  const expiredSafetyState = await detachExpiredSafetyState(pool, policy);
  await analyzeHistory(pool);
  return { created, expired, expiredSafetyState };
}

/** Retention without anyone running a command: how often, and what it keeps. */
export type RetentionSchedule = RetentionPolicy & {
  /** A run begins at most this often across every process that offers (database clock). */
  readonly everyMs: number;
};

const SCHEDULED_JOB = "retention";

/**
 * Runs the retention job if no process began a run in the last `everyMs` (maintenance_run's
 * guarded claim; null when not due or another process has it). A failed run clears its claim,
 * so the next offer retries, and rethrows.
 */
export async function runScheduledRetention(pool: Pool, schedule: RetentionSchedule): Promise<RetentionReport | null> {
  const [claim] = await run<{ started_at: string }>(pool, sql.claimScheduledRun, [SCHEDULED_JOB, schedule.everyMs]);
  if (!claim) return null;
  try {
    const report = await runRetention(pool, schedule);
    await run(pool, sql.finishScheduledRun, [SCHEDULED_JOB, claim.started_at, JSON.stringify(report)]);
    return report;
  } catch (error) {
    await run(pool, sql.abandonScheduledRun, [SCHEDULED_JOB, claim.started_at, error instanceof Error ? error.message : String(error)]);
    throw error;
  }
}

/** A run's report as the retention command prints it: what was created, dropped, and kept and why. */
export function retentionSummary({ created, expired, expiredSafetyState }: RetentionReport) {
  return {
    created,
    dropped: expired.filter((month) => month.dropped).map(({ partition, rows }) => ({ partition, rows })),
    detached: expiredSafetyState.filter((month) => month.detached).map(({ partition, rows }) => ({ partition, rows })),
    kept: [
      ...expired.filter((month) => !month.dropped).map(({ partition, rows, heldBySteps }) => ({ partition, rows, heldBySteps })),
      ...expiredSafetyState.filter((month) => !month.detached).map(({ partition, rows, heldBySteps, referencedBy }) => ({ partition, rows, heldBySteps, referencedBy })),
    ],
  };
}
