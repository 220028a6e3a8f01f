/**
 * `npm run scenarios`: the fault-scenario harness. Real worker processes, the real destination
 * process and real PostgreSQL; every fault against every destination contract; after each cell an
 * independent SQL checker decides SPEC.md's invariants 1–8.
 *
 *   npm run scenarios                                  every fault × every contract, readable table
 *   npm run scenarios -- --json                        …and one JSON summary as the last line
 *   npm run scenarios -- --only kill,pause --contract fenced
 *   npm run scenarios -- --soak 10m --seed 7           random (seeded) fault schedule for 10 minutes
 *   npm run scenarios -- --seed 42                     a fixed seed (default: random, printed)
 *   npm run scenarios -- --parallel 2                  cells at once (default 1; 2 cores are tight)
 *
 * Faults: kill, pause, drop-response, conn-kill, db-restart, clock-offset, dup-recoverers, restore,
 * failover-sync, failover-async, failover-patroni-sync, failover-patroni-async (these four against
 * fenced and idempotent only; the last two need Debian's patroni and etcd-server).
 * Contracts: fenced, idempotent, queryable, opaque. Exits 1 if any cell failed; each failure
 * prints the command that replays it.
 */
import { randomInt } from "node:crypto";
import { deriveSeed, openEnvironment, runCell, runMatrix, type Environment, type Selection } from "./matrix";
import { cellLine, renderTable, summarize, tableHeader } from "./report";
import { appliesTo, CONTRACTS, FAULTS, recoveryBoundMs, type CellResult } from "./types";
import { seededRandom } from "@/lib/demo/destination/faults";
import { command, DATABASE_ENVIRONMENT, exit, listOf, UsageError } from "@/lib/cli/command";

type Options = { json: boolean; selection: Selection; seed: number; soakMs: number | null; parallel: number };

function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--soak takes a duration like 10m, 90s or 1h; got "${text}"`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? "s"]!;
  return Math.round(Number(match[1]) * unit);
}

function parseOptions(): Options {
  const { values } = command({
    name: "npm run scenarios",
    summary:
      "the fault-scenario harness: every fault against every destination contract on real worker, destination and PostgreSQL processes, each cell judged by an independent checker of SPEC.md's invariants; exits 1 if any cell failed, printing the command that replays it.",
    options: {
      json: { type: "boolean", description: "end with one JSON summary on the last stdout line (the table goes to stderr)" },
      only: { type: "string", valueName: "faults", default: FAULTS.join(","), description: "faults to run" },
      contract: { type: "string", valueName: "contracts", default: CONTRACTS.join(","), description: "destination contracts to run them against" },
      soak: { type: "string", valueName: "duration", description: "instead of the matrix, a random (seeded) fault schedule for this long: 10m, 90s, 1h" },
      seed: { type: "string", valueName: "n", description: "seed of the run, in [0, 2^32); random and printed when omitted" },
      parallel: { type: "string", valueName: "n", default: "1", description: "cells at once, 1 to 8 (2 cores are tight)" },
    },
    environment: [
      { name: "FENCELINE_SCENARIO_PG_BIN", default: "/usr/lib/postgresql/15/bin", description: "PostgreSQL binaries for the db-restart cell's own cluster and the failover cells' servers" },
      { name: "FENCELINE_SCENARIO_FAILOVER_PORTS", default: "free ports", description: "primary,standby: the quick failover tier's two ports" },
      { name: "FENCELINE_SCENARIO_PATRONI_PORTS", default: "free ports", description: "base: the Patroni tier's etcd client and peer, two PostgreSQL and two REST API ports, base … base+5" },
      ...DATABASE_ENVIRONMENT.filter((variable) => variable.name !== "FENCELINE_DATABASE"),
    ],
    examples: ["npm run scenarios -- --json --seed 20261129", "npm run scenarios -- --only kill,pause --contract fenced", "npm run scenarios -- --soak 10m --seed 7"],
  });
  const seed = values.seed === undefined ? randomInt(1, 2 ** 31) : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new UsageError(`--seed takes an integer in [0, 2^32); got "${values.seed}"`);
  const parallel = Number(values.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 8) throw new UsageError(`--parallel takes 1–8; got "${values.parallel}"`);
  return {
    json: values.json,
    selection: { faults: listOf("only", values.only, FAULTS), contracts: listOf("contract", values.contract, CONTRACTS) },
    seed,
    soakMs: values.soak === undefined ? null : parseDuration(values.soak),
    parallel,
  };
}

/** Random (seeded) schedule: cell after cell, each fault and contract drawn, until the time is up. */
async function soak(environment: Environment, options: Options, onCell: (cell: CellResult) => void): Promise<CellResult[]> {
  const random = seededRandom(options.seed);
  const deadline = Date.now() + options.soakMs!;
  const results: CellResult[] = [];
  for (let iteration = 0; Date.now() < deadline; iteration += 1) {
    const fault = options.selection.faults[Math.floor(random() * options.selection.faults.length)]!;
    const contract = options.selection.contracts[Math.floor(random() * options.selection.contracts.length)]!;
    if (!appliesTo(fault, contract)) continue;
    // Each iteration has its own run seed, so its replay command is an ordinary one-cell run.
    const iterationSeed = deriveSeed(options.seed, "soak", String(iteration));
    const result = await runCell(environment, fault, contract, iterationSeed, (line) => console.error(line));
    results.push(result);
    onCell(result);
  }
  return results;
}

async function main(): Promise<number> {
  const options = parseOptions();
  const startedAt = Date.now();
  const out = (line: string) => (options.json ? console.error(line) : console.log(line));
  const mode = options.soakMs === null ? "matrix" : "soak";
  out(
    mode === "matrix"
      ? `fenceline scenarios: ${options.selection.faults.length} fault(s) × ${options.selection.contracts.length} contract(s), seed ${options.seed}`
      : `fenceline soak: ${options.soakMs! / 1000} s of random faults over ${options.selection.faults.join(",")} × ${options.selection.contracts.join(",")}, seed ${options.seed}`,
  );
  const environment = await openEnvironment();
  let cells: CellResult[];
  try {
    out(tableHeader);
    const onCell = (cell: CellResult) => {
      out(cellLine(cell));
      if (!cell.passed) for (const failure of cell.failures) out(`      ! ${failure.split("\n")[0]}\n      replay: ${cell.replay}`);
    };
    cells =
      mode === "matrix"
        ? await runMatrix(environment, options.selection, options.seed, { parallel: options.parallel, onCell, log: (line) => console.error(line) })
        : await soak(environment, options, onCell);
  } finally {
    await environment.close();
  }
  const summary = summarize(cells, {
    seed: options.seed,
    mode,
    durationMs: Date.now() - startedAt,
    latencySamples: cells.flatMap((cell) => cell.latencySamples),
    bound: recoveryBoundMs(),
  });
  out("");
  out(renderTable(summary, cells).split("\n").slice(cells.length + 2).join("\n"));
  if (options.json) console.log(JSON.stringify(summary));
  return summary.passed ? 0 : 1;
}

await exit(await main());
