/**
 * `npm run epoch:transition -- [--reason "..."]`: moves the fencing term to a new epoch after a
 * database restore or reset (lib/engine/epoch.ts). Installs it at the fenced destination named by
 * FENCELINE_DESTINATION_URL (default http://127.0.0.1:4100, the demo's). Prints the result as
 * JSON; exits 1 when a destination stays blocked.
 */
import { parseArgs } from "node:util";
import { fencedEpochAdmin } from "@/lib/adapters/destinations";
import { auditEpochTransition } from "@/lib/audit/log";
import { createPool, databaseUrl } from "@/lib/db/pool";
import { runEpochTransition } from "@/lib/engine/epoch";
import { integerFromEnv } from "@/lib/env";

const { values } = parseArgs({ options: { reason: { type: "string", default: "manual transition (npm run epoch:transition)" } } });
const destinationUrl = process.env.FENCELINE_DESTINATION_URL ?? "http://127.0.0.1:4100";
const pool = createPool(databaseUrl(), { applicationName: "fenceline-epoch-transition" });
try {
  const result = await runEpochTransition(pool, {
    reason: values.reason,
    requestedBy: `cli:${process.env.USER ?? "unknown"}`,
    destinations: [fencedEpochAdmin(destinationUrl)],
    drainTimeoutMs: integerFromEnv("FENCELINE_EPOCH_DRAIN_MS", 10_000),
    recordOutcome: auditEpochTransition,
  });
  console.log(JSON.stringify(result, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2));
  process.exitCode = result.state === "completed" ? 0 : 1;
} catch (error) {
  console.error(`epoch transition failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
