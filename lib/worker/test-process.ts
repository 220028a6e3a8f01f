/**
 * Spawns real processes for scenario tests, the fault harness and benchmarks, and waits on the
 * lines they print (readiness, checkpoint traces) rather than on sleeps. Test support only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));


export type Spawned = {
  readonly name: string;
  readonly process: ChildProcess;
  /** Resolves with the first stdout line matching `pattern`, earlier lines included. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Every stdout line matching `pattern` so far. */
  linesMatching(pattern: RegExp): string[];
  /** Last lines of stdout and stderr, for a failure report. */
  tail(lines?: number): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly alive: boolean;
};

/** Runs `node --import tsx <script>` from the project root and keeps its output for waits and reports. */
export function spawnNodeProcess(name: string, script: string, env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: string[] = [];
  const log: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    stdout.push(line);
    log.push(`[out] ${line}`);
    if (log.length > 400) log.shift();
    for (const listener of listeners) listener(line);
  });
  createInterface({ input: child.stderr! }).on("line", (line) => {
    log.push(`[err] ${line}`);
    if (log.length > 400) log.shift();
  });
  let alive = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      alive = false;
      resolve({ code, signal });
    }),
  );
  return {
    name,
    process: child,
    exited,
    get alive() {
      return alive;
    },
    linesMatching: (pattern) => stdout.filter((line) => pattern.test(line)),
    tail: (lines = 30) => log.slice(-lines).join("\n"),
    waitForLine: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const seen = stdout.find((line) => pattern.test(line));
        if (seen) return resolve(seen);
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`${name} (pid ${child.pid}) printed no line matching ${pattern} within ${timeoutMs} ms\n${log.slice(-15).join("\n")}`));
        }, timeoutMs);
        const listener = (line: string) => {
          if (!pattern.test(line)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(line);
        };
        listeners.add(listener);
        void exited.then(({ code, signal }) => {
          if (!listeners.has(listener)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          reject(new Error(`${name} exited (code ${code}, signal ${signal}) before printing ${pattern}\n${log.slice(-15).join("\n")}`));
        });
      }),
  };
}

export type WorkerProcess = Spawned;

/** A worker process (`lib/cli/worker.ts`) serving lib/worker/test-definitions.ts unless `env` names other definitions. */
export function spawnWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
  return spawnNodeProcess("scenario-worker", "lib/cli/worker.ts", {
    DATABASE_URL: databaseUrl,
    FENCELINE_PROCESS: "scenario-worker",
    FENCELINE_DEFINITIONS: "lib/worker/test-definitions.ts",
    ...env,
  });
}

export async function stopAll(workers: readonly WorkerProcess[]): Promise<void> {
  for (const worker of workers) if (worker.process.exitCode === null) worker.process.kill("SIGTERM");
  await Promise.all(workers.map((worker) => worker.exited));
}
