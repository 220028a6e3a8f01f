/**
 * Pause (SIGSTOP), resume (SIGCONT) or kill (SIGKILL) a worker process from the fault lab. Only
 * a session that is not stopped, whose host is this machine, and whose pid is still a Fenceline
 * worker process (checked in /proc, so a reused pid is never signalled) — anything else is a 4xx.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import type { Pool } from "pg";
import type { LabAction } from "@/lib/api/contract/engineer/lab";
import { run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import * as sql from "@/lib/workers/sql";
import { SignalRefusedError } from "./errors";

const SIGNALS = { pause: "SIGSTOP", resume: "SIGCONT", kill: "SIGKILL" } as const satisfies Record<LabAction, NodeJS.Signals>;

/** What marks a worker process: its entry point on the command line. */
const WORKER_ENTRY = /lib[/\\]cli[/\\]worker\.ts|lib[/\\]worker[/\\]/;

type SessionRow = { id: string; host: string; pid: number; stopped_at: Date | null };

export type SignalResult = { sessionId: string; pid: number; action: LabAction; signal: string };

/** The command line of a process, or null when there is no such process. */
export async function commandLine(pid: number): Promise<string | null> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ").trim();
  } catch {
    return null;
  }
}

export async function signalWorker(
  pool: Pool,
  sessionId: string,
  action: LabAction,
  options: { isWorker?: (pid: number) => Promise<boolean>; send?: (pid: number, signal: NodeJS.Signals) => void } = {},
): Promise<SignalResult> {
  const [session] = await run<SessionRow>(pool, sql.readSession, [sessionId]);
  if (!session) throw new NotFoundError("worker session", sessionId);
  if (session.stopped_at) throw new SignalRefusedError("session_stopped", `session ${sessionId} stopped; its process is not a worker any more`);
  if (session.host !== hostname()) {
    throw new SignalRefusedError("other_host", `session ${sessionId} runs on ${session.host}; the lab signals processes on ${hostname()} only`);
  }
  if (session.pid <= 1 || session.pid === process.pid) throw new SignalRefusedError("not_a_worker", `pid ${session.pid} is not a worker process`);
  const isWorker =
    options.isWorker ??
    (async (pid: number) => {
      const cmd = await commandLine(pid);
      return cmd !== null && WORKER_ENTRY.test(cmd);
    });
  if (!(await isWorker(session.pid))) {
    throw new SignalRefusedError("not_a_worker", `pid ${session.pid} of session ${sessionId} is gone or is not a Fenceline worker process`);
  }
  const signal = SIGNALS[action];
  try {
    (options.send ?? ((pid, sig) => process.kill(pid, sig)))(session.pid, signal);
  } catch (error) {
    throw new SignalRefusedError("signal_failed", `could not send ${signal} to pid ${session.pid}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { sessionId, pid: session.pid, action, signal };
}
