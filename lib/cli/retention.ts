/**
 * `npm run retention`: one run of the retention job (lib/engine/retention.ts), repeated until a
 * run prunes less than a full batch. FENCELINE_RETENTION_DAYS (default 30) is how long audit
 * detail of settled steps is kept.
 */
import { createPool } from "@/lib/db/pool";
import { pruneAuditDetail, type Pruned } from "@/lib/engine/retention";
import { integerFromEnv } from "@/lib/env";
import { command, DATABASE_ENVIRONMENT, resolveAppDatabase } from "./command";

command({
  name: "npm run retention",
  summary: "prunes the audit detail (lease events, fencing rejections, late observations, recovery decisions) of steps settled longer ago than the retention period, and prints what it pruned as JSON.",
  options: {},
  environment: [{ name: "FENCELINE_RETENTION_DAYS", default: "30", description: "days the audit detail of a settled step is kept" }, ...DATABASE_ENVIRONMENT],
  examples: ["FENCELINE_RETENTION_DAYS=90 npm run retention"],
});

const BATCH_SIZE = 5_000;
const keepMs = integerFromEnv("FENCELINE_RETENTION_DAYS", 30, { min: 1 }) * 86_400_000;
const pool = createPool((await resolveAppDatabase()).url, { applicationName: "fenceline-retention" });
const total: Pruned = { leaseEvents: 0, fencingRejections: 0, lateObservations: 0, recoveryDecisions: 0 };
try {
  for (;;) {
    const pruned = await pruneAuditDetail(pool, { keepMs, batchSize: BATCH_SIZE });
    for (const key of Object.keys(total) as (keyof Pruned)[]) total[key] += pruned[key];
    if (Object.values(pruned).every((n) => n < BATCH_SIZE)) break;
  }
  console.log(JSON.stringify({ keptDays: keepMs / 86_400_000, pruned: total }));
} finally {
  await pool.end();
}
