/**
 * The one way bench code reaches the engines it runs beside Fenceline: graphile-worker, pg-boss
 * and DBOS Transact. They live in a package of their own (this folder's package.json and lock),
 * which the repository's `npm install` leaves alone: graphile-worker and pg-boss declare Node >= 22
 * and only the bench and its tests run them. The first caller that needs a peer installs the
 * package (`npm ci` here, once, under a lock so that parallel test files wait for one install),
 * and again when the lock file changed since.
 *
 * Usage, from any bench code: `const { run } = await graphileWorker()`, `await pgBoss()`,
 * `await dbos()`, `dbosCli()`, `peerVersions()`; types as `import type { Peer… } from "./peers"`.
 * The layering rules (.dependency-cruiser.mjs) refuse an import of a peer from anywhere else.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { acquireBuildLock } from "@/lib/cli/build-lock";

export type * as GraphileWorker from "graphile-worker";
export type * as PgBossModule from "pg-boss";
export type * as Dbos from "@dbos-inc/dbos-sdk";

/** This package's folder: lib/bench/peers. */
export const PEERS_DIR = import.meta.dirname;
const LOCK = path.join(PEERS_DIR, "package-lock.json");
/** Written after a successful install: the lock file's hash it installed. */
const STAMP = path.join(PEERS_DIR, "node_modules", ".fenceline-installed");

const lockHash = () => createHash("sha256").update(readFileSync(LOCK)).digest("hex");

/** True when node_modules holds what the lock file names. */
export function peersInstalled(): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, "utf8") === lockHash();
}

let installing: Promise<void> | undefined;

/**
 * Installs the peers' package unless it is installed already: `npm ci` from its lock, output
 * kept and shown only if it fails (npm's engine warnings for graphile-worker and pg-boss are
 * expected: they run on Node 20.19 here). `log` hears one line when an install starts.
 */
export function installPeers(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<void> {
  if (peersInstalled()) return Promise.resolve();
  installing ??= (async () => {
    const release = await acquireBuildLock(path.join(PEERS_DIR, ".install.lock"), () => false, (pid) => log(`bench peers: waiting for the install of process ${pid}`));
    try {
      if (peersInstalled()) return;
      log(`bench peers: installing graphile-worker, pg-boss and DBOS Transact into ${path.relative(process.cwd(), PEERS_DIR) || "."} (first use; npm ci)`);
      const startedAt = performance.now();
      const output = await npmCi();
      if (output.code !== 0) throw new Error(`npm ci in ${PEERS_DIR} failed (exit ${output.code}):\n${output.text}`);
      writeFileSync(STAMP, lockHash());
      log(`bench peers: installed in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
    } finally {
      release?.();
    }
  })();
  // A failed install may be tried again by the next caller.
  installing.catch(() => (installing = undefined));
  return installing;
}

function npmCi(): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const child = spawn(npm, ["ci", "--no-audit", "--no-fund"], { cwd: PEERS_DIR, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_loglevel: "warn" } });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, text }));
  });
}

/** graphile-worker, installed on first need. */
export async function graphileWorker(): Promise<typeof import("graphile-worker")> {
  await installPeers();
  return import("graphile-worker");
}

/** pg-boss, installed on first need. */
export async function pgBoss(): Promise<typeof import("pg-boss")> {
  await installPeers();
  return import("pg-boss");
}

/** DBOS Transact (@dbos-inc/dbos-sdk), installed on first need. */
export async function dbos(): Promise<typeof import("@dbos-inc/dbos-sdk")> {
  await installPeers();
  return import("@dbos-inc/dbos-sdk");
}

/**
 * The `pg` the peers use: their package's own copy, apart from the repository's. A bench child
 * that counts statements patches both (lib/bench/child.ts).
 */
export async function peersPg(): Promise<typeof import("pg")> {
  await installPeers();
  return (await import("pg")).default as unknown as typeof import("pg");
}

/** The `dbos` command's script (`node <it> schema <url>` creates DBOS's system tables). */
export async function dbosCli(): Promise<string> {
  await installPeers();
  return path.join(PEERS_DIR, "node_modules/@dbos-inc/dbos-sdk/dist/src/cli/cli.js");
}

/** The installed peers' versions, for the run's header (their exports do not include package.json). */
export async function peerVersions(): Promise<{ graphileWorker: string; pgBoss: string; dbos: string }> {
  await installPeers();
  const versionOf = (name: string) => (JSON.parse(readFileSync(path.join(PEERS_DIR, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  return { graphileWorker: versionOf("graphile-worker"), pgBoss: versionOf("pg-boss"), dbos: versionOf("@dbos-inc/dbos-sdk") };
}
