/**
 * `npm run retention`: one run of the retention job (lib/engine/retention.ts): creates the
 * partitions for the months ahead, then drops the months of audit detail older than
 * FENCELINE_RETENTION_DAYS (default 30) that no unsettled step needs, and detaches such months of
 * receipts and attempts into the archive schema. The coordinators also run it on a schedule
 * (FENCELINE_RETENTION_EVERY_HOURS); with that off, run this daily (cron, a systemd timer). A
 * missed run only keeps history longer and sends new rows to the default partition, from which
 * the next run moves them. It ends by analysing the partitioned parents,
 * which autovacuum never does.
 */
import { createPool, directDatabaseUrl } from "@/lib/db/pool";
import { retentionSummary, runRetention } from "@/lib/engine/retention";
import { integerFromEnv } from "@/lib/env";
import { command, resolveAppDatabase, SESSION_DATABASE_ENVIRONMENT } from "./command";

command({
  name: "npm run retention",
  summary:
    "creates the partitions for the months ahead, drops the months of audit detail (lease events, fencing rejections, late observations, recovery decisions) older than the retention period that no unsettled step needs, detaches such months of receipts and attempts (kept forever) into the archive schema, and prints what it did as JSON.",
  options: {},
  environment: [{ name: "FENCELINE_RETENTION_DAYS", default: "30", description: "days the audit detail is kept at least" }, ...SESSION_DATABASE_ENVIRONMENT],
  examples: ["FENCELINE_RETENTION_DAYS=90 npm run retention"],
});

const keepMs = integerFromEnv("FENCELINE_RETENTION_DAYS", 30, { min: 1 }) * 86_400_000;
const pool = createPool(directDatabaseUrl() ?? (await resolveAppDatabase()).url, { applicationName: "fenceline-retention" });
try {
  console.log(JSON.stringify({ keptDays: keepMs / 86_400_000, ...retentionSummary(await runRetention(pool, { keepMs })) }));
} finally {
  await pool.end();
}
