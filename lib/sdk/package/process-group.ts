/**
 * Runs a command in a process group of its own, for the package scenario's adopter commands
 * (`npm test`). npm starts node's test runner, which starts a child per test file, which starts
 * the kit's worker and embedded PostgreSQL: killing npm alone on a timeout left the rest running.
 * The command is spawned detached (its pid is the group's id), and when it fails, times out or is
 * still running when this process ends, the whole group is signalled: SIGTERM, then SIGKILL to
 * whatever is left after a grace period.
 */
import { spawn } from "node:child_process";

export interface GroupRun {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly timedOut: boolean;
}

export interface GroupOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  /** How long the group has to stop after SIGTERM before SIGKILL. */
  readonly graceMs?: number;
}

/** Thrown when the command exits non-zero or times out; carries its output. */
export class GroupRunError extends Error {
  constructor(
    readonly command: string,
    readonly result: GroupRun,
  ) {
    super(`${command} ${result.timedOut ? "timed out" : `exited with ${result.code ?? "a signal"}`}`);
  }
}

const running = new Set<number>();

/** Signals every process in group `pgid`; false when none is left. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const groupAlive = (pgid: number): boolean => signalGroup(pgid, 0);

/** SIGTERM to the group, then SIGKILL to what is left after `graceMs`; resolves when the group is gone. */
export async function killGroup(pgid: number, graceMs = 5_000): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (signalGroup(pgid, "SIGKILL")) {
    while (groupAlive(pgid)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A test run that ends (or is interrupted) mid-command leaves no group behind.
process.once("exit", () => {
  for (const pgid of running) signalGroup(pgid, "SIGKILL");
});

/**
 * Runs `command` with `args` in a new process group and resolves with its output when it exits 0.
 * On a non-zero exit or a timeout the group is killed (anything it left running goes too) and a
 * GroupRunError says which, with the output.
 */
export async function runInGroup(command: string, args: readonly string[], { cwd, env, timeoutMs, graceMs }: GroupOptions): Promise<GroupRun> {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid;
  if (pgid === undefined) {
    throw await new Promise<Error>((resolve) => child.once("error", resolve));
  }
  running.add(pgid);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void killGroup(pgid, graceMs);
  }, timeoutMs);
  try {
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (exitCode) => resolve(exitCode));
    });
    // On a failure the group goes at once: what the command started may hold its output open.
    if (timedOut || code !== 0) await killGroup(pgid, graceMs);
    await closed;
    const result: GroupRun = { stdout, stderr, code, timedOut };
    if (timedOut || code !== 0) throw new GroupRunError(`${command} ${args.join(" ")}`, result);
    return result;
  } finally {
    clearTimeout(timer);
    running.delete(pgid);
  }
}
