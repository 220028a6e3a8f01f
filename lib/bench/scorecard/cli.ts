/**
 * `npm run scorecard`: the same faults on Fenceline, graphile-worker, pg-boss and DBOS Transact,
 * each used as its documentation recommends for a side effect, and what landed counted at the
 * synthetic destination's own audit (lib/bench/scorecard/scorecard.ts; docs/benchmarks/scorecard.md).
 *
 *   npm run scorecard                                  every engine and contract, the published seed
 *   npm run scorecard -- --json                        …and one JSON object on the last stdout line
 *   npm run scorecard -- --engines fenceline,pgBoss --contracts idempotent --seed 7
 *
 * Progress goes to stderr. Exits 1 when Fenceline broke one of its promises (or a run failed);
 * a peer's failures are figures, not an exit code. Interrupted, it stops its workers, destination
 * and PostgreSQL cluster and drops its databases before it exits.
 */
import { command, DATABASE_ENVIRONMENT, exit, listOf, positiveNumber, UsageError } from "@/lib/cli/command";
import { CONTRACTS } from "@/lib/scenarios/types";
import { DEFAULT_JOBS_PER_FAULT, renderScorecard, runScorecard, SCORECARD_SEED, untilInterrupted } from "./scorecard";
import { SCORECARD_ENGINES } from "./types";

const { values } = command({
  name: "npm run scorecard",
  summary:
    "runs the same faults (answer lost after the effect, SIGKILL mid-call, PostgreSQL restart, a worker paused past its lease) on Fenceline and its peers, each in fresh databases, and counts at the destination what each engine's jobs did there; a peer's failure is reported only where a second seed reproduces it.",
  options: {
    json: { type: "boolean", description: "end with one JSON object on the last stdout line" },
    engines: { type: "string", valueName: "engines", default: SCORECARD_ENGINES.join(","), description: `engines, from ${SCORECARD_ENGINES.join(", ")}` },
    contracts: { type: "string", valueName: "contracts", default: CONTRACTS.join(","), description: `destination contracts, from ${CONTRACTS.join(", ")}` },
    jobs: { type: "string", valueName: "n", default: String(DEFAULT_JOBS_PER_FAULT), description: "jobs per contract in each fault's batch, 1 to 8" },
    seed: { type: "string", valueName: "n", default: String(SCORECARD_SEED), description: "seed of the fault schedule, in [0, 2^32)" },
    "no-confirm": { type: "boolean", description: "skip the second seed's runs (a failure is then not confirmed)" },
  },
  environment: [
    { name: "FENCELINE_SCENARIO_PG_BIN", default: "/usr/lib/postgresql/15/bin", description: "PostgreSQL binaries for the engines' own cluster (the one the harness restarts)" },
    ...DATABASE_ENVIRONMENT.filter((variable) => variable.name !== "FENCELINE_DATABASE"),
  ],
  examples: ["npm run scorecard -- --json", "npm run scorecard -- --engines fenceline,pgBoss --contracts idempotent --jobs 2"],
});

const jobsPerFault = Math.round(positiveNumber("jobs", values.jobs));
if (jobsPerFault > 8) throw new UsageError(`--jobs takes 1 to 8 (Fenceline's demo adapters run 8 calls at once); got ${values.jobs}`);
const seed = Number(values.seed);
if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new UsageError(`--seed takes an integer in [0, 2^32); got "${values.seed}"`);

const log = (line: string) => process.stderr.write(`[scorecard] ${line}\n`);
const engines = listOf("engines", values.engines, SCORECARD_ENGINES);
const contracts = listOf("contracts", values.contracts, CONTRACTS);
const result = await untilInterrupted(
  (signal) => runScorecard({ engines, contracts, jobsPerFault, seed, confirm: !values["no-confirm"], log, signal }),
  log,
);
process.stdout.write(`${renderScorecard(result)}\n`);
if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
await exit(result.fencelineHolds ? 0 : 1);
