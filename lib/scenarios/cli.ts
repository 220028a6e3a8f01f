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
 * Faults: kill, pause, drop-response, conn-kill, db-restart, clock-offset, dup-recoverers.
 * Contracts: fenced, idempotent, queryable, opaque. Exits 1 if any cell failed; each failure
 * prints the command that replays it.
 */
import { randomInt } from "node:crypto";
import { deriveSeed, everything, openEnvironment, runCell, runMatrix, type Environment, type Selection } from "./matrix";
import { cellLine, renderTable, summarize, tableHeader } from "./report";
import { appliesTo, CONTRACTS, FAULTS, isContract, isFault, recoveryBoundMs, type CellResult, type Contract, type FaultKind } from "./types";
import { seededRandom } from "@/lib/demo/destination/faults";

type Options = { json: boolean; selection: Selection; seed: number; soakMs: number | null; parallel: number };

function usage(message: string): never {
  console.error(`${message}\nusage: npm run scenarios -- [--json] [--only <fault>[,<fault>]] [--contract <c>[,<c>]] [--soak <10m|90s|1h>] [--seed <n>] [--parallel <n>]`);
  console.error(`faults: ${FAULTS.join(", ")}\ncontracts: ${CONTRACTS.join(", ")}`);
  process.exit(2);
}

function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) usage(`--soak takes a duration like 10m, 90s or 1h; got "${text}"`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? "s"]!;
  return Math.round(Number(match[1]) * unit);
}

function parseArgs(argv: string[]): Options {
  const options: Options = { json: false, selection: everything, seed: randomInt(1, 2 ** 31), soakMs: null, parallel: 1 };
  let faults: FaultKind[] = [...FAULTS];
  let contracts: Contract[] = [...CONTRACTS];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) usage(`${arg} needs a value`);
      return next;
    };
    switch (arg) {
      case "--json":
        options.json = true;
        break;
      case "--only": {
        const names = value().split(",").filter(Boolean);
        const unknown = names.filter((name) => !isFault(name));
        if (unknown.length > 0) usage(`unknown fault(s): ${unknown.join(", ")}`);
        faults = names as FaultKind[];
        break;
      }
      case "--contract": {
        const names = value().split(",").filter(Boolean);
        const unknown = names.filter((name) => !isContract(name));
        if (unknown.length > 0) usage(`unknown contract(s): ${unknown.join(", ")}`);
        contracts = names as Contract[];
        break;
      }
      case "--seed": {
        const seed = Number(value());
        if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) usage("--seed takes an integer in [0, 2^32)");
        options.seed = seed;
        break;
      }
      case "--soak":
        options.soakMs = parseDuration(value());
        break;
      case "--parallel": {
        const parallel = Number(value());
        if (!Number.isInteger(parallel) || parallel < 1 || parallel > 8) usage("--parallel takes 1–8");
        options.parallel = parallel;
        break;
      }
      default:
        usage(`unknown argument ${arg}`);
    }
  }
  options.selection = { faults, contracts };
  return options;
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
  const options = parseArgs(process.argv.slice(2));
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack ?? error.message : String(error));
    process.exit(2);
  },
);
