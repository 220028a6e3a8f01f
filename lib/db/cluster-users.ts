/**
 * Which processes of this checkout use its embedded PostgreSQL: one empty file per process, named
 * by its pid, in a directory beside the data directory. The cluster keeps running while any of
 * them is alive, and the last one to leave stops it. A process that died without leaving leaves a
 * file whose pid no longer runs; it is ignored and removed.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export function joinClusterUsers(directory: string): void {
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, String(process.pid)), "");
}

export function leaveClusterUsers(directory: string): void {
  rmSync(path.join(directory, String(process.pid)), { force: true });
}

/** Pids of the other live processes that joined. */
export function otherClusterUsers(directory: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return [];
    throw error;
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
  return pids.filter((pid) => {
    if (pid === process.pid) return false;
    if (isRunning(pid)) return true;
    rmSync(path.join(directory, String(pid)), { force: true });
    return false;
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as { code?: unknown }).code === "EPERM";
  }
}
