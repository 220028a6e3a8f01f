/**
 * Spawns real worker processes for scenario tests and waits on the lines they print (readiness,
 * checkpoint traces) rather than on sleeps. Test support only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export type WorkerProcess = {
  readonly process: ChildProcess;
  /** Resolves with the first stdout line matching `pattern` (earlier lines included). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
};

export function spawnWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/worker.ts"], {
    env: { ...process.env, DATABASE_URL: databaseUrl, FENCELINE_PROCESS: "scenario-worker", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    for (const listener of listeners) listener(line);
  });
  child.stderr!.resume();
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    process: child,
    exited,
    waitForLine: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((line) => pattern.test(line));
        if (seen) return resolve(seen);
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`worker ${child.pid} printed no line matching ${pattern} within ${timeoutMs} ms`));
        }, timeoutMs);
        const listener = (line: string) => {
          if (!pattern.test(line)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(line);
        };
        listeners.add(listener);
      }),
  };
}

export async function stopAll(workers: readonly WorkerProcess[]): Promise<void> {
  for (const worker of workers) if (worker.process.exitCode === null) worker.process.kill("SIGTERM");
  await Promise.all(workers.map((worker) => worker.exited));
}
