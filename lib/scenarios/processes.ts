/**
 * The real processes a cell runs: worker processes (`lib/cli/worker.ts`) and the synthetic
 * destination service (`lib/demo/destination/main.ts`). Both are spawned with `node` directly
 * (never through npm), so signals reach the process itself and LD_PRELOAD (libfaketime) applies to
 * that one process only. Their output is kept in memory for the cell's log.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { FaultSettings } from "@/lib/demo/destination/faults";
import type { DestinationAudit } from "@/lib/demo/destination/service";
import { spawnNodeProcess, type Spawned } from "@/lib/worker/test-process";
import { TIMING } from "./types";

export type { Spawned };


export type WorkerOptions = {
  /** Shown as the worker's application_name, so its connections can be found and terminated. */
  name: string;
  concurrency?: number;
  recoveryIntervalMs?: number;
  /** FENCELINE_PAUSE_AT: the worker hangs forever at this checkpoint. */
  pauseAt?: string;
  /** Wall-clock offset for libfaketime, e.g. "+3s" or "-3s". Monotonic time stays real. */
  clockOffset?: string;
  extraEnv?: Record<string, string>;
};

export function spawnWorker(databaseUrl: string, destinationUrl: string, options: WorkerOptions): Spawned {
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    FENCELINE_DESTINATION_URL: destinationUrl,
    FENCELINE_PROCESS: options.name,
    FENCELINE_DEFINITIONS: "lib/scenarios/definitions.ts",
    FENCELINE_TRACE_CHECKPOINTS: "1",
    FENCELINE_RECOVERY_INTERVAL_MS: String(options.recoveryIntervalMs ?? TIMING.scanIntervalMs),
    FENCELINE_POLL_INTERVAL_MS: String(TIMING.pollIntervalMs),
    FENCELINE_WORKER_CONCURRENCY: String(options.concurrency ?? 4),
    ...options.extraEnv,
  };
  if (options.pauseAt) env.FENCELINE_PAUSE_AT = options.pauseAt;
  if (options.clockOffset) {
    env.LD_PRELOAD = libfaketimePath();
    env.FAKETIME = options.clockOffset;
    env.FAKETIME_DONT_FAKE_MONOTONIC = "1";
    env.FAKETIME_NO_CACHE = "1";
  }
  return spawnNodeProcess(options.name, "lib/cli/worker.ts", env);
}

let faketime: string | undefined;

/** Full path of libfaketime.so.1 (LD_PRELOAD needs it), from dpkg or the usual Debian location. */
export function libfaketimePath(): string {
  if (faketime) return faketime;
  const candidates = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"];
  try {
    const listed = execFileSync("dpkg", ["-L", "libfaketime"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    candidates.unshift(...listed.split("\n").filter((line) => line.endsWith("/libfaketime.so.1")));
  } catch {
    // not a dpkg system, or the package is missing: try the usual paths
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error("libfaketime is not installed (apt-get install libfaketime): the clock-offset fault needs it");
  faketime = found;
  return found;
}

/**
 * Proves libfaketime takes effect for a node process with `offset` (e.g. "+3s"): returns how far
 * its Date.now() is from ours, in ms.
 */
export async function measureClockOffset(offset: string): Promise<number> {
  const child = spawn(process.execPath, ["-e", "process.stdout.write(String(Date.now()))"], {
    env: { ...process.env, LD_PRELOAD: libfaketimePath(), FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: "1", FAKETIME_NO_CACHE: "1" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const before = Date.now();
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await new Promise((resolve) => child.on("exit", resolve));
  const after = Date.now();
  return Number(output) - (before + after) / 2;
}

export async function stopProcesses(processes: readonly Spawned[], graceMs = 5_000): Promise<void> {
  await Promise.all(
    processes.map(async (spawned) => {
      if (!spawned.alive) return;
      // A stopped process cannot handle SIGTERM until it runs again.
      spawned.process.kill("SIGCONT");
      spawned.process.kill("SIGTERM");
      const timer = setTimeout(() => spawned.alive && spawned.process.kill("SIGKILL"), graceMs);
      await spawned.exited;
      clearTimeout(timer);
    }),
  );
}

/** The destination service process and its admin routes. */
export class DestinationProcess {
  private constructor(
    readonly spawned: Spawned,
    readonly url: string,
  ) {}

  static async start(databaseUrl: string): Promise<DestinationProcess> {
    const spawned = spawnNodeProcess("destination", "lib/demo/destination/main.ts", {
      DESTINATION_DATABASE_URL: databaseUrl,
      DESTINATION_PORT: "0",
      FENCELINE_PROCESS: "scenario-destination",
    });
    try {
      const line = await spawned.waitForLine(/^FENCELINE_DESTINATION_READY /, 30_000);
      return new DestinationProcess(spawned, line.split(" ")[1]!);
    } catch (error) {
      spawned.process.kill("SIGKILL");
      throw error;
    }
  }

  async setFaults(settings: Partial<FaultSettings>): Promise<void> {
    const response = await fetch(`${this.url}/admin/faults`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(settings),
    });
    if (!response.ok) throw new Error(`PUT /admin/faults answered ${response.status}: ${await response.text()}`);
  }

  async audit(): Promise<DestinationAudit> {
    const response = await fetch(`${this.url}/admin/audit`);
    if (!response.ok) throw new Error(`GET /admin/audit answered ${response.status}`);
    return (await response.json()) as DestinationAudit;
  }

  async stop(): Promise<void> {
    await stopProcesses([this.spawned]);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs`. */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
    }
    await sleep(intervalMs);
  }
}

export const checkpointLine = (name: string) => new RegExp(`^FENCELINE_CHECKPOINT ${name} (\\S+) (\\d+)$`);

/** Parses `FENCELINE_CHECKPOINT <name> <stepId> <term>`. */
export function parseCheckpoint(line: string): { name: string; stepId: string; term: number } {
  const [, name, stepId, term] = line.split(" ");
  return { name: name!, stepId: stepId!, term: Number(term) };
}


