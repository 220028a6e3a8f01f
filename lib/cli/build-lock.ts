/**
 * One `next build` at a time per checkout: Next.js refuses a second concurrent build outright, and
 * two `npm start`s of one checkout (or two test files that start it) may find the build stale at
 * the same moment. The lock is a file holding its owner's pid; a lock whose owner is gone (killed
 * before it could remove the file) is taken over.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Waits until this process holds the lock at `file` and answers its release, or null when
 * `stopping()` turned true while waiting. `onWait` is told once whom it waits for.
 */
export async function acquireBuildLock(file: string, stopping: () => boolean, onWait: (pid: number) => void): Promise<(() => void) | null> {
  let told = false;
  while (!stopping()) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => {
        if (readFileSync(file, "utf8") === String(process.pid)) unlinkSync(file);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number.parseInt(readFileSync(file, "utf8"), 10);
    if (!Number.isInteger(owner) || !alive(owner)) {
      unlinkSync(file);
      continue;
    }
    if (!told) onWait(owner);
    told = true;
    await sleep(500);
  }
  return null;
}
