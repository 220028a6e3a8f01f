/**
 * `npm test`: typecheck, then vitest, then Playwright, each with its output streamed. Ends with
 * one plain line, `N passed, N failed, N skipped`, summed over every runner (the typecheck counts
 * as one check), and exits 1 if anything failed. A runner that exits non-zero without reporting a
 * failed test (crash, setup error, no tests found) counts as one failure.
 *
 *   npm test -- --only vitest                 run a subset (typecheck, vitest, playwright; comma-separated)
 *   npm test -- --only vitest lib/db          further arguments go to the one runner selected
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

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
      // Route types for typedRoutes come from `next typegen`; a fresh clone has none yet.
      const typegen = await exec(process.execPath, [bin("next", "dist", "bin", "next"), "typegen"]);
      const tsc = typegen === 0 ? await exec(process.execPath, [bin("typescript", "bin", "tsc"), "--noEmit"]) : typegen;
      return tsc === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 };
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

function parseArgs(argv: string[]): { selected: Runner[]; extraArgs: string[] } {
  const onlyAt = argv.indexOf("--only");
  if (onlyAt === -1) {
    if (argv.length > 0) throw new Error("arguments for a runner need --only <runner> to say which");
    return { selected: runners, extraArgs: [] };
  }
  const names = (argv[onlyAt + 1] ?? "").split(",").filter(Boolean);
  const unknown = names.filter((name) => !runners.some((runner) => runner.name === name));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--only takes ${runners.map((runner) => runner.name).join(", ")}; got "${argv[onlyAt + 1] ?? ""}"`);
  }
  const extraArgs = argv.filter((_, index) => index !== onlyAt && index !== onlyAt + 1);
  if (extraArgs.length > 0 && names.length !== 1) throw new Error("runner arguments need exactly one runner after --only");
  return { selected: runners.filter((runner) => names.includes(runner.name)), extraArgs };
}

async function main(): Promise<number> {
  const { selected, extraArgs } = parseArgs(process.argv.slice(2));
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

main().then(
  (exitCode) => process.exit(exitCode),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(2);
  },
);
