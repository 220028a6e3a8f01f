import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "vitest";
import { acquireBuildLock } from "./build-lock";

const lockFile = () => path.join(mkdtempSync(path.join(tmpdir(), "build-lock-")), "build.lock");

test("a second holder waits for the first to release, and is told whom it waits for", async () => {
  const file = lockFile();
  const first = (await acquireBuildLock(file, () => false, () => {}))!;
  const waitedFor: number[] = [];
  let secondHeld = false;
  const second = acquireBuildLock(file, () => false, (pid) => waitedFor.push(pid)).then((release) => {
    secondHeld = true;
    return release!;
  });
  await new Promise((resolve) => setTimeout(resolve, 700));
  expect(secondHeld).toBe(false);
  expect(waitedFor).toEqual([process.pid]);
  first();
  (await second)();
  expect(existsSync(file)).toBe(false);
});

test("a lock left by a process that is gone is taken over; a stop while waiting gives up", async () => {
  const file = lockFile();
  // A pid far above any pid_max the kernel allows is never alive.
  writeFileSync(file, "999999999");
  const release = await acquireBuildLock(file, () => false, () => {});
  expect(release).not.toBeNull();
  let stopping = false;
  const waiting = acquireBuildLock(file, () => stopping, () => {});
  stopping = true;
  expect(await waiting).toBeNull();
  release!();
});
