/**
 * Starts benchmark children (lib/bench/child.ts) and reads what the kernel knows about them:
 * peak resident memory (VmHWM) and CPU time. Benchmark support only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { ChildMessage, ChildRole, HarnessMessage } from "./child-protocol";

const CLOCK_TICKS_PER_S = 100;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

export type Report = Extract<ChildMessage, { type: "report" }>;

export type BenchChild = {
  readonly pid: number;
  /** Resolves once the child is serving (with the protocol server's port). */
  readonly ready: Promise<{ port?: number }>;
  /** Epoch ms of the first handler start in this child. */
  readonly firstStart: Promise<number>;
  report(): Promise<Report>;
  /** Peak resident set size so far, in MiB (VmHWM). */
  peakRssMb(): number;
  /** User + system CPU time so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
};

let profiled = 0;

/** `env` is added to this process's environment for the child (FENCELINE_DB_PREPARED, say). */
export function spawnChild(role: ChildRole, env: Record<string, string> = {}): BenchChild {
  // FENCELINE_BENCH_CPU_PROF=<directory>: each child writes V8 CPU profiles (one per thread: tsx's
  // loader hooks run in their own) into a folder of its own there when it exits.
  const profileDir = process.env.FENCELINE_BENCH_CPU_PROF;
  const profile = profileDir ? ["--cpu-prof", "--cpu-prof-dir", `${profileDir}/${role.role}-${(profiled += 1)}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, "--import", "tsx", "lib/bench/child.ts"], {
    env: { ...process.env, ...env, FENCELINE_BENCH_CHILD: JSON.stringify(role) },
    // The child's stdout goes to our stderr: with --json, stdout carries only the result.
    stdio: ["ignore", 2, 2, "ipc"],
  });
  const pid = child.pid ?? -1;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waiting = new Map<ChildMessage["type"], (message: ChildMessage) => void>();
  const next = <T extends ChildMessage["type"]>(type: T, timeoutMs: number): Promise<Extract<ChildMessage, { type: T }>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench child ${pid} (${role.role}) sent no "${type}" within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      waiting.set(type, (message) => {
        clearTimeout(timer);
        resolve(message as Extract<ChildMessage, { type: T }>);
      });
      void exited.then(() => reject(new Error(`bench child ${pid} (${role.role}) exited before sending "${type}"`)));
    });
  child.on("message", (message: ChildMessage) => {
    const resolve = waiting.get(message.type);
    waiting.delete(message.type);
    resolve?.(message);
  });
  const ready = next("ready", START_TIMEOUT_MS).then((message) => ({ port: message.port }));
  const firstStart = new Promise<number>((resolve) => {
    child.on("message", (message: ChildMessage) => {
      if (message.type === "first-start") resolve(message.atMs);
    });
  });
  const post = (message: HarnessMessage) => child.send(message);

  return {
    pid,
    ready,
    firstStart,
    report: () => {
      const answer = next("report", START_TIMEOUT_MS);
      post({ type: "report" });
      return answer;
    },
    peakRssMb: () => statusField(pid, "VmHWM") / 1024,
    cpuMs: () => cpuTimeMs(pid),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      post({ type: "stop" });
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A numeric field of /proc/<pid>/status, in kB; 0 once the process is gone. */
function statusField(pid: number, field: string): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU time of any process on this host (e.g. a PostgreSQL backend), in ms; 0 once gone. */
export function cpuTimeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state is field 3, so utime (14) and stime (15) sit at 11 and 12 here.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** The fields of /proc/<pid>/stat after the command, or null once the process is gone. */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The parent of a process on this host (a PostgreSQL backend's is its postmaster); null once gone. */
export function parentPid(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : null;
}

/**
 * CPU time so far of a whole PostgreSQL server on this host, in ms: the postmaster, every child it
 * has (backends, autovacuum, checkpointer, WAL writer, …), and the children it has already reaped
 * (its cutime and cstime), so a backend that ends between two readings is still counted.
 */
export function serverCpuMs(postmasterPid: number): number {
  const own = statFields(postmasterPid);
  if (!own) throw new Error(`no PostgreSQL postmaster with pid ${postmasterPid} on this host`);
  // utime, stime, cutime, cstime: fields 14 to 17, at 11 to 14 here.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[1]) === postmasterPid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}
