/**
 * The retention job: prunes audit detail (lease events, fencing rejections, late observations,
 * recovery decisions) of settled steps once it is older than the policy allows. The history
 * tables refuse deletion unless `fenceline.retention` is on, which only this transaction sets.
 */
import type { Pool } from "pg";
import { inTransaction, queryOf } from "./db";
import * as sql from "./sql/retention";

export type RetentionPolicy = {
  /** Audit detail younger than this is kept. */
  readonly keepMs: number;
  /** Rows per table per run, so one run stays a short transaction. */
  readonly batchSize: number;
};

export type Pruned = { leaseEvents: number; fencingRejections: number; lateObservations: number; recoveryDecisions: number };

export async function pruneAuditDetail(pool: Pool, policy: RetentionPolicy): Promise<Pruned> {
  return inTransaction(pool, async (client) => {
    await client.query("SET LOCAL fenceline.retention = 'on'");
    const count = async (statement: typeof sql.pruneLeaseEvents) => {
      const result = await client.query(queryOf(statement, [policy.keepMs, policy.batchSize]));
      return result.rowCount ?? 0;
    };
    return {
      leaseEvents: await count(sql.pruneLeaseEvents),
      fencingRejections: await count(sql.pruneFencingRejections),
      lateObservations: await count(sql.pruneLateObservations),
      recoveryDecisions: await count(sql.pruneRecoveryDecisions),
    };
  });
}
