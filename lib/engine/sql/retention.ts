/**
 * Retention: audit detail older than $1 ms is pruned, one table per statement, up to $2 rows each.
 * Only evidence of steps that are settled for good goes: a step still running, waiting, or under
 * review keeps everything, because recovery and people decide from it. Safety state — receipts,
 * attempts (they carry the request identity), review cases, workflows and their idempotency keys,
 * and whatever a destination keeps — is never touched here.
 */
import type { NamedSql } from "../db";
import { FINAL_STEP_STATES, sqlList } from "../vocabulary";

const settled = (stepColumn: string) => `
EXISTS (
  SELECT 1 FROM step s
  WHERE s.id = ${stepColumn}
    AND s.state IN (${sqlList(FINAL_STEP_STATES)})
    AND NOT EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = 'open')
)`;

const prune = (name: string, table: string, timeColumn: string): NamedSql => ({
  name,
  text: `
DELETE FROM ${table}
WHERE id IN (
  SELECT t.id FROM ${table} t
  WHERE t.${timeColumn} < now() - $1::bigint * interval '1 millisecond'
    AND ${settled("t.step_id")}
  LIMIT $2
)`,
});

export const pruneLeaseEvents = prune("fl_prune_lease_events", "lease_event", "at");
export const pruneFencingRejections = prune("fl_prune_fencing_rejections", "fencing_rejection", "at");
export const pruneLateObservations = prune("fl_prune_late_observations", "late_observation", "at");
export const pruneRecoveryDecisions = prune("fl_prune_recovery_decisions", "recovery_decision", "decided_at");
