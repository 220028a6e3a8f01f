/**
 * The long tier of the model-based test: the same property as lib/model/engine.model.db.test.ts,
 * outside vitest, on a throwaway database cloned from the migrated template.
 *
 *   npm run test:model -- --runs 100000 [--seed=N --path=P --replay-path=R] [--max-commands 50] [--no-shrink]
 *
 * Prints throughput (sequences per minute) as it goes, and on failure the shrunk counterexample
 * with the seed and path that replay it.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import fc from "fast-check";
import pg from "pg";
import { resolveDatabaseUrl, withDatabase } from "@/lib/db/database";
import { createPool } from "@/lib/db/pool";
import { prepareTemplate, TEMPLATE_DATABASE, TEMPLATE_LOCK_KEY, withAdmin } from "@/lib/db/test-template";
import { engineProperty } from "./commands";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000" },
    seed: { type: "string" },
    path: { type: "string" },
    "replay-path": { type: "string" },
    "max-commands": { type: "string", default: "50" },
    "no-shrink": { type: "boolean", default: false },
  },
});

async function main(): Promise<number> {
  const server = await resolveDatabaseUrl({ database: "postgres" });
  await prepareTemplate(server.url);
  const name = `fenceline_model_${process.pid}_${randomBytes(4).toString("hex")}`;
  await withAdmin(server.url, async (admin) => {
    await admin.query("SELECT pg_advisory_lock_shared($1)", [TEMPLATE_LOCK_KEY]);
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(TEMPLATE_DATABASE)}`);
    } finally {
      await admin.query("SELECT pg_advisory_unlock_shared($1)", [TEMPLATE_LOCK_KEY]);
    }
  });
  const pool = createPool(withDatabase(server.url, name), { applicationName: "fenceline-model", max: 5 });
  const stats: { sequences: number; commands: number; resetMs?: number } = { sequences: 0, commands: 0 };
  const startedAt = Date.now();
  const progress = setInterval(() => report("progress"), 30_000);
  function report(label: string) {
    const minutes = (Date.now() - startedAt) / 60_000;
    console.log(
      `${label}: ${stats.sequences} sequences, ${stats.commands} commands in ${(minutes * 60).toFixed(1)} s ` +
        `(${Math.round(stats.sequences / minutes)} sequences/min, ${Math.round(stats.commands / minutes)} commands/min; reset ${((stats.resetMs ?? 0) / Math.max(1, stats.sequences)).toFixed(1)} ms/sequence)`,
    );
  }
  try {
    const details = await fc.check(engineProperty(pool, stats, Number(values["max-commands"]), values["replay-path"]), {
      numRuns: Number(values.runs),
      seed: values.seed === undefined ? undefined : Number(values.seed),
      path: values.path,
      endOnFailure: values["no-shrink"],
    });
    clearInterval(progress);
    report("done");
    if (details.failed) {
      console.error(fc.defaultReportMessage(details));
      console.error(details.errorInstance);
      return 1;
    }
    return 0;
  } finally {
    clearInterval(progress);
    await pool.end();
    await withAdmin(server.url, (admin) => admin.query(`DROP DATABASE ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
