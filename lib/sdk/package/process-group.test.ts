/**
 * An adopter's `npm test` run by the package scenario leaves nothing behind when it fails or
 * times out: a real npm starts node's test runner on a test file that starts a process of its
 * own, and after the run no process naming that file or that process is left.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, test } from "vitest";
import { GroupRunError, runInGroup } from "./process-group";

const run = promisify(execFile);
let project: string | undefined;

afterEach(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

/**
 * A project whose `npm test` runs one test file that starts a long-lived process (named by
 * `marker`) and then hangs or fails.
 */
async function adopterProject(marker: string, ending: "hang" | "fail"): Promise<string> {
  project = await mkdtemp(path.join(tmpdir(), "fenceline-group-"));
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "adopter", private: true, scripts: { test: "node --test" } }));
  await writeFile(
    path.join(project, `${marker}.test.mjs`),
    `import { spawn } from "node:child_process";\nimport { test } from "node:test";\n` +
      `test("starts a helper", async () => {\n` +
      `  spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "${marker}-helper"], { stdio: "ignore" }).unref();\n` +
      (ending === "hang" ? `  await new Promise(() => setInterval(() => {}, 1000));\n` : `  throw new Error("deliberate failure");\n`) +
      `});\n`,
  );
  return project;
}

async function processesNaming(marker: string): Promise<string[]> {
  const { stdout } = await run("ps", ["-eo", "pid,args"]);
  return stdout.split("\n").filter((line) => line.includes(marker));
}

test("a timed-out npm test is killed with the test runner and everything it started", async () => {
  const marker = `hang-${randomBytes(4).toString("hex")}`;
  const cwd = await adopterProject(marker, "hang");
  const failure = await runInGroup("npm", ["test"], { cwd, timeoutMs: 3_000, graceMs: 1_000 }).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(GroupRunError);
  expect((failure as GroupRunError).result.timedOut).toBe(true);
  expect(await processesNaming(marker)).toEqual([]);
});

test("a failing npm test takes down what its test file left running", async () => {
  const marker = `fail-${randomBytes(4).toString("hex")}`;
  const cwd = await adopterProject(marker, "fail");
  const failure = await runInGroup("npm", ["test"], { cwd, timeoutMs: 20_000, graceMs: 1_000 }).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(GroupRunError);
  expect((failure as GroupRunError).result).toMatchObject({ timedOut: false, code: 1 });
  expect((failure as GroupRunError).result.stdout).toContain("deliberate failure");
  expect(await processesNaming(marker)).toEqual([]);
});
