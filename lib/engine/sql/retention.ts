/**
 * Retention and partition maintenance of the history tables (lease_event, fencing_rejection,
 * late_observation, recovery_decision), which are partitioned by month (migration
 * 20261204500000_history_partitioned_by_time, decision 017). The work is in that migration's
 * functions because it is DDL on names only known at run time; these statements call them.
 * Safety state — receipts, attempts (they carry the request identity), review cases, workflows
 * and their idempotency keys, and whatever a destination keeps — is never deleted here: receipts
 * and attempts are partitioned by month too, and an old settled month of them is detached into
 * the archive schema, where it stays queryable.
 */
import type { NamedSql } from "../db";

/** Creates the missing monthly partitions from $1's month through $2's; returns their names. */
export const ensureHistoryPartitions: NamedSql = {
  name: "fl_ensure_history_partitions",
  text: "SELECT created FROM fl_ensure_history_partitions($1::timestamptz, $2::timestamptz) created",
};

/**
 * The same for attempts and receipts, partitioned by time-ordered id (migration
 * 20261205100000_attempts_and_receipts_partitioned_by_time).
 */
export const ensureSafetyPartitions: NamedSql = {
  name: "fl_ensure_safety_partitions",
  text: "SELECT created FROM fl_ensure_safety_partitions($1::timestamptz, $2::timestamptz) created",
};

/**
 * Detaches each monthly partition of receipts, then of attempts, that ended more than $1 ms ago
 * and holds nothing of a step not settled for good ($2), into the archive schema; a month of
 * attempts a still-attached receipt names stays. Reports every expired month.
 */
export const detachExpiredSafetyPartitions: NamedSql = {
  name: "fl_detach_expired_safety_partitions",
  text: `
SELECT table_name, partition_name, rows::int, held_by_steps::int, referenced_by::int, detached
FROM fl_detach_expired_safety_partitions(now() - $1::bigint * interval '1 millisecond', $2::text[])`,
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
export const analyzeHistory = "ANALYZE lease_event, fencing_rejection, late_observation, recovery_decision, attempt, receipt";

/**
 * Claims the scheduled run of job $1 when none began in the last $2 ms (or the last one failed
 * and cleared its claim): one guarded update, so of several coordinators offering at once one
 * wins, and the others wait for its commit and then see the fresh start time.
 */
export const claimScheduledRun: NamedSql = {
  name: "fl_claim_scheduled_run",
  text: `
UPDATE maintenance_run
SET started_at = now(), finished_at = NULL
WHERE job = $1 AND (started_at IS NULL OR started_at <= now() - $2::bigint * interval '1 millisecond')
-- As text: a JavaScript Date would drop the microseconds the later updates match on.
RETURNING started_at::text AS started_at`,
};

/** Records the end of job $1's run that began at $2, with its report $3. */
export const finishScheduledRun: NamedSql = {
  name: "fl_finish_scheduled_run",
  text: "UPDATE maintenance_run SET finished_at = now(), report = $3::jsonb WHERE job = $1 AND started_at = $2::timestamptz",
};

/** A run of job $1 that began at $2 failed: its claim goes, so the next offer tries again. */
export const abandonScheduledRun: NamedSql = {
  name: "fl_abandon_scheduled_run",
  text: "UPDATE maintenance_run SET started_at = NULL, report = jsonb_build_object('error', $3::text) WHERE job = $1 AND started_at = $2::timestamptz",
};
