/**
 * What the destination itself saw, read from its own tables and audit (lib/demo/destination):
 * effects per logical job, found by the digest of the job's body that every effect row keeps;
 * stale writes the fenced destination refused (409) and any it accepted under a term not newer than
 * the resource's last (its fence regressions). No engine table is read here.
 */
import type pg from "pg";
import { digestOf, readAudit } from "@/lib/demo/destination/service";
import type { LogicalJob } from "./types";

export type DestinationCount = {
  /** Effects applied per job number. */
  readonly effects: ReadonlyMap<number, number>;
  /** Effects whose kind and body match no job (a count the rest cannot be trusted without: must be 0). */
  readonly unattributed: number;
  readonly staleWritesRejected: number;
  readonly staleWritesAccepted: number;
  /** Answers dropped after the effect committed (fault injection). */
  readonly droppedResponses: number;
};

const effectsByBody = `
SELECT kind, payload_digest, count(*)::int AS effects
FROM destination.effect
GROUP BY kind, payload_digest`;

export async function countAtDestination(pool: pg.Pool, jobs: readonly LogicalJob[]): Promise<DestinationCount> {
  const jobOf = new Map(jobs.map((job) => [`${job.contract} ${digestOf(job.payload)}`, job.n]));
  const [{ rows }, audit] = await Promise.all([pool.query<{ kind: string; payload_digest: string; effects: number }>(effectsByBody), readAudit(pool)]);
  const effects = new Map(jobs.map((job) => [job.n, 0]));
  let unattributed = 0;
  for (const row of rows) {
    const n = jobOf.get(`${row.kind} ${row.payload_digest}`);
    if (n === undefined) unattributed += row.effects;
    else effects.set(n, row.effects);
  }
  return {
    effects,
    unattributed,
    staleWritesRejected: audit.staleTermRejections,
    staleWritesAccepted: audit.fenceRegressions.length,
    droppedResponses: audit.droppedResponses,
  };
}
