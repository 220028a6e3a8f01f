/**
 * The long tier of the model-based test: the same property as lib/model/engine.model.db.test.ts,
 * outside vitest, on a throwaway database cloned from the migrated template.
 *
 *   npm run test:model -- --runs 100000 [--jobs 2] [--seed=N --path=P --replay-path=R] [--max-commands 50] [--no-shrink]
 *
 * Prints throughput (sequences per minute) as it goes, and on failure the shrunk counterexample
 * with the seed and path that replay it. `--jobs N` splits the runs over N processes, each with
 * its own database and the seed base + i, because one process leaves a core idle while it waits
 * on PostgreSQL; a failure in any of them replays alone from the seed and path it prints.
 */
import { fork } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { createInterface } from "node:readline";
import fc from "fast-check";
import pg from "pg";
import { command, DATABASE_ENVIRONMENT, exit, UsageError } from "@/lib/cli/command";
import { resolveDatabaseUrl, withDatabase } from "@/lib/db/database";
import { createPool } from "@/lib/db/pool";
import { prepareTemplate, TEMPLATE_DATABASE, TEMPLATE_LOCK_KEY, withAdmin } from "@/lib/db/test-template";
import { engineProperty } from "./commands";

const { values } = command({
  name: "npm run test:model",
  summary: "the long tier of the model-based test: random command sequences against the real engine and a reference model, on a throwaway database cloned from the migrated template.",
  options: {
    runs: { type: "string", valueName: "n", default: "1000", description: "command sequences to run" },
    jobs: { type: "string", valueName: "n", default: "1", description: "processes to split the runs over, each with its own database and seed (base + i)" },
    seed: { type: "string", valueName: "n", description: "fast-check seed; random when omitted" },
    path: { type: "string", valueName: "p", description: "replay one failing run: the path a failure printed (with --seed, without --jobs)" },
    "replay-path": { type: "string", valueName: "r", description: "the scheduler's replay path a failure printed" },
    "max-commands": { type: "string", valueName: "n", default: "50", description: "longest command sequence" },
    "no-shrink": { type: "boolean", description: "stop at the first failure without shrinking it" },
  },
  environment: DATABASE_ENVIRONMENT.filter((variable) => variable.name !== "FENCELINE_DATABASE"),
  examples: ["npm run test:model -- --runs 100000 --jobs 2 --seed 20261129", "npm run test:model -- --seed 42 --path 17:3 --replay-path AB"],
});

/** A positive integer option, else a usage failure naming it. */
function count(option: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${option} must be a positive integer, got "${raw}"`);
  return value;
}
const runs = count("runs", values.runs);
const jobs = count("jobs", values.jobs);
const maxCommands = count("max-commands", values["max-commands"]);
if (values.seed !== undefined && !Number.isInteger(Number(values.seed))) throw new UsageError(`--seed must be an integer, got "${values.seed}"`);
if (jobs > 1 && values.path !== undefined) throw new UsageError("--path replays one run: use it without --jobs");

/** The last line a run prints, read by the parent of a `--jobs` run. */
const RESULT_PREFIX = "model-result ";

async function main(): Promise<number> {
  if (jobs > 1) return runJobs(jobs);
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
    const details = await fc.check(engineProperty(pool, stats, maxCommands, values["replay-path"]), {
      numRuns: runs,
      seed: values.seed === undefined ? undefined : Number(values.seed),
      path: values.path,
      endOnFailure: values["no-shrink"],
    });
    clearInterval(progress);
    report("done");
    console.log(RESULT_PREFIX + JSON.stringify({ ...stats, failed: details.failed, seconds: (Date.now() - startedAt) / 1000 }));
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

/** Runs `jobs` copies of this command over a share of the runs each and sums what they report. */
async function runJobs(jobs: number): Promise<number> {
  const base = values.seed === undefined ? randomInt(2 ** 31 - jobs) : Number(values.seed);
  const startedAt = Date.now();
  const shards = Array.from({ length: jobs }, (_, i) => {
    const args = ["--runs", String(Math.floor(runs / jobs) + (i < runs % jobs ? 1 : 0)), "--seed", String(base + i)];
    args.push("--max-commands", values["max-commands"]);
    if (values["no-shrink"]) args.push("--no-shrink");
    console.log(`job ${i}: seed ${base + i}`);
    const child = fork(process.argv[1]!, args, { stdio: ["ignore", "pipe", "inherit", "ipc"] });
    let result: { sequences: number; commands: number } | undefined;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith(RESULT_PREFIX)) result = JSON.parse(line.slice(RESULT_PREFIX.length));
      else console.log(`job ${i}: ${line}`);
    });
    return new Promise<{ code: number; result: typeof result }>((resolve) =>
      child.on("exit", (code) => resolve({ code: code ?? 1, result })),
    );
  });
  const outcomes = await Promise.all(shards);
  const sequences = outcomes.reduce((sum, o) => sum + (o.result?.sequences ?? 0), 0);
  const commands = outcomes.reduce((sum, o) => sum + (o.result?.commands ?? 0), 0);
  const minutes = (Date.now() - startedAt) / 60_000;
  console.log(
    `all jobs: ${sequences} sequences, ${commands} commands in ${(minutes * 60).toFixed(1)} s ` +
      `(${Math.round(sequences / minutes)} sequences/min, ${Math.round(commands / minutes)} commands/min); ` +
      `${outcomes.filter((o) => o.code !== 0).length} of ${jobs} jobs failed`,
  );
  return outcomes.every((o) => o.code === 0) ? 0 : 1;
}

await exit(await main());
