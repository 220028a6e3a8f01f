/**
 * Retention and partition maintenance of the history tables (lease_event, fencing_rejection,
 * late_observation, recovery_decision), which are partitioned by month (migration
 * 20261204500000_history_partitioned_by_time, decision 017). The work is in that migration's
 * functions because it is DDL on names only known at run time; these statements call them.
 * Safety state — receipts, attempts (they carry the request identity), review cases, workflows
 * and their idempotency keys, and whatever a destination keeps — is never touched here.
 */
import type { NamedSql } from "../db";

/** Creates the missing monthly partitions from $1's month through $2's; returns their names. */
export const ensureHistoryPartitions: NamedSql = {
  name: "fl_ensure_history_partitions",
  text: "SELECT created FROM fl_ensure_history_partitions($1::timestamptz, $2::timestamptz) created",
};

/**
 * Drops each monthly partition that ended more than $1 ms ago and holds nothing of a step that
 * is not settled for good ($2: the final step states); reports the ones it keeps and why.
 */
export const dropExpiredHistoryPartitions: NamedSql = {
  name: "fl_drop_expired_history_partitions",
  text: `
SELECT table_name, partition_name, rows::int, held_by_steps::int, dropped
FROM fl_drop_expired_history_partitions(now() - $1::bigint * interval '1 millisecond', $2::text[])`,
};

/**
 * Autovacuum analyses partitions but never a partitioned parent, and the planner estimates a
 * query over the parent (a step's history, the metrics' ranges) from the parent's statistics.
 */
export const analyzeHistory = "ANALYZE lease_event, fencing_rejection, late_observation, recovery_decision";
