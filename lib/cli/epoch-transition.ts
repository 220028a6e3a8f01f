/**
 * `npm run epoch:transition -- [--reason "..."]`: moves the fencing term to a new epoch after a
 * database restore or reset (lib/engine/epoch.ts). Installs it at every registered fenced
 * destination that names an epoch administration URL. Prints the result as JSON; exits 1 when a
 * destination stays blocked.
 */
import { auditEpochTransition } from "@/lib/audit/log";
import { createPool, directDatabaseUrl } from "@/lib/db/pool";
import { runEpochTransition } from "@/lib/engine/epoch";
import { registeredEpochDestinations } from "@/lib/engine/epoch-admin";
import { TransitionInProgressError } from "@/lib/engine/errors";
import { integerFromEnv } from "@/lib/env";
import { command, resolveAppDatabase, SESSION_DATABASE_ENVIRONMENT } from "./command";

const { values } = command({
  name: "npm run epoch:transition",
  summary: "after a database restore or reset, moves the fencing term to a new epoch, installs it at every registered fenced destination with an epoch administration URL and proves the old one is refused there; prints the result as JSON and exits 1 when a destination stays blocked.",
  options: { reason: { type: "string", valueName: "text", default: "manual transition (npm run epoch:transition)", description: "why, kept in the audit log" } },
  environment: [
    { name: "FENCELINE_EPOCH_DRAIN_MS", default: "10000", description: "how long in-flight attempts may finish before their leases are revoked" },
    ...SESSION_DATABASE_ENVIRONMENT,
  ],
  examples: ['npm run epoch:transition -- --reason "restored from the 03:00 backup"'],
});
const drainTimeoutMs = integerFromEnv("FENCELINE_EPOCH_DRAIN_MS", 10_000);
const pool = createPool(directDatabaseUrl() ?? (await resolveAppDatabase()).url, { applicationName: "fenceline-epoch-transition" });
try {
  const result = await runEpochTransition(pool, {
    reason: values.reason,
    requestedBy: `cli:${process.env.USER ?? "unknown"}`,
    destinations: await registeredEpochDestinations(pool),
    drainTimeoutMs,
    recordOutcome: auditEpochTransition,
  });
  console.log(JSON.stringify(result, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2));
  process.exitCode = result.state === "completed" ? 0 : 1;
} catch (error) {
  if (!(error instanceof TransitionInProgressError)) throw error;
  console.error(`epoch transition refused: ${error.message}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
