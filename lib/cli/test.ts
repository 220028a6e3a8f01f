/**
 * `npm test`: typecheck, the docs check, then vitest, then Playwright, each with its output streamed. Ends with
 * one plain line, `N passed, N failed, N skipped`, summed over every runner (the typecheck and the
 * docs check count as one each), and exits 1 if anything failed. A runner that exits non-zero without reporting a
 * failed test (crash, setup error, no tests found) counts as one failure.
 *
 *   npm test -- --only vitest                 run a subset (typecheck, docs, vitest, playwright; comma-separated)
 *   npm test -- --only vitest lib/db          further arguments go to the one runner selected
 *   npm test -- --help                        the usage (after --only's value, --help goes to the runner)
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { command, exit, listOf, UsageError } from "./command";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (...parts: string[]) => path.join(root, "node_modules", ...parts);

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

interface Runner {
  name: string;
  run(extraArgs: string[], reportDir: string): Promise<Counts>;
}

const runners: Runner[] = [
  {
    name: "typecheck",
    async run() {
      // `npm run typecheck`: next typegen, then tsc, after installing the bench's peers if missing.
      const code = await exec(process.execPath, ["--import", "tsx", path.join(root, "lib", "cli", "typecheck.ts")]);
      return code === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 };
    },
  },
  {
    name: "docs",
    async run() {
      // `npm run docs -- --check`: the API reference is current and every documentation link resolves.
      const code = await exec(process.execPath, ["--import", "tsx", path.join(root, "lib", "cli", "docs.ts"), "--check"]);
      return code === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 };
    },
  },
  {
    name: "vitest",
    async run(extraArgs, reportDir) {
      const report = path.join(reportDir, "vitest.json");
      const exitCode = await exec(process.execPath, [
        bin("vitest", "vitest.mjs"),
        "run",
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${report}`,
        ...extraArgs,
      ]);
      const json = await readJson<{ numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number }>(report);
      const counts = json
        ? { passed: json.numPassedTests, failed: json.numFailedTests, skipped: json.numPendingTests + json.numTodoTests }
        : { passed: 0, failed: 0, skipped: 0 };
      return withExitCode(counts, exitCode);
    },
  },
  {
    name: "playwright",
    async run(extraArgs, reportDir) {
      const report = path.join(reportDir, "playwright.json");
      const exitCode = await exec(
        process.execPath,
        [bin("@playwright", "test", "cli.js"), "test", "--reporter=list,json", ...extraArgs],
        { PLAYWRIGHT_JSON_OUTPUT_FILE: report },
      );
      const json = await readJson<{ stats: { expected: number; unexpected: number; flaky: number; skipped: number } }>(report);
      const counts = json
        ? { passed: json.stats.expected + json.stats.flaky, failed: json.stats.unexpected, skipped: json.stats.skipped }
        : { passed: 0, failed: 0, skipped: 0 };
      return withExitCode(counts, exitCode);
    },
  },
];

function withExitCode(counts: Counts, exitCode: number): Counts {
  return exitCode !== 0 && counts.failed === 0 ? { ...counts, failed: 1 } : counts;
}

function exec(command: string, args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
    child.once("error", (error) => {
      console.error(`could not run ${command}: ${error.message}`);
      resolve(1);
    });
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** `--only` picks the runners; whatever follows its value goes to the one runner it names. */
function parseOptions(argv: string[]): { selected: Runner[]; extraArgs: string[] } {
  const onlyAt = argv.findIndex((arg) => arg === "--only" || arg.startsWith("--only="));
  const ownLength = onlyAt === -1 ? argv.length : onlyAt + (argv[onlyAt]!.includes("=") ? 1 : 2);
  const names = runners.map((runner) => runner.name);
  const { values } = command({
    name: "npm test",
    summary: "runs every test: the typecheck, the docs check (API reference and links), vitest (unit, PostgreSQL and process tiers) and Playwright, and ends with the line `N passed, N failed, N skipped` summed over every runner.",
    options: { only: { type: "string", valueName: "runners", default: names.join(","), description: "runners to run (comma-separated); arguments after it go to the one runner named" } },
    environment: [
      { name: "DATABASE_URL", default: "this checkout's embedded PostgreSQL", description: "the PostgreSQL the tests use" },
      { name: "EMBEDDED_PG_PORT", default: "54329", description: "port of the embedded PostgreSQL" },
      { name: "E2E_PORT", default: "3100", description: "port of the web app the Playwright run starts" },
    ],
    examples: ["npm test", "npm test -- --only vitest lib/db", "npm test -- --only playwright e2e/track.spec.ts"],
    argv: argv.slice(0, ownLength),
  });
  const selected = listOf("only", values.only, names);
  const extraArgs = argv.slice(ownLength);
  if (extraArgs.length > 0 && selected.length !== 1) throw new UsageError("runner arguments need exactly one runner after --only");
  return { selected: runners.filter((runner) => selected.includes(runner.name)), extraArgs };
}

async function main(): Promise<number> {
  const { selected, extraArgs } = parseOptions(process.argv.slice(2));
  const reportDir = await mkdtemp(path.join(tmpdir(), "fenceline-test-"));
  const results: Array<{ name: string; counts: Counts; seconds: number }> = [];
  try {
    for (const runner of selected) {
      console.log(`\n=== ${runner.name} ===`);
      const startedAt = Date.now();
      const counts = await runner.run(extraArgs, reportDir);
      results.push({ name: runner.name, counts, seconds: (Date.now() - startedAt) / 1000 });
    }
  } finally {
    await rm(reportDir, { recursive: true, force: true });
  }

  const total = results.reduce(
    (sum, { counts }) => ({ passed: sum.passed + counts.passed, failed: sum.failed + counts.failed, skipped: sum.skipped + counts.skipped }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  console.log("\n=== summary ===");
  for (const { name, counts, seconds } of results) {
    // Deliberately not "N passed, N failed": only the closing line should read as the total.
    console.log(`${name.padEnd(11)} passed ${counts.passed}  failed ${counts.failed}  skipped ${counts.skipped}  (${seconds.toFixed(1)} s)`);
  }
  console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  return total.failed > 0 ? 1 : 0;
}

await exit(await main());
