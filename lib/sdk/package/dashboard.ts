/**
 * Builds `fenceline-dashboard`, the companion package `fenceline dev` starts when an adopter's
 * project has it installed (docs/decisions/018): the web app (dashboard and HTTP API) as Next.js's
 * standalone server, `next build` with FENCELINE_STANDALONE=1 into its own distDir
 * (.next-standalone, so `npm start`'s .next is left alone), with the node_modules Next traced for
 * it, its static assets and public/; and start.mjs, lib/cli/dashboard.ts bundled by esbuild,
 * which seeds the demo sign-ins and the run's credentials and then runs that server.
 *
 * It is packed with tar rather than `npm pack`, which leaves out every node_modules folder: the
 * traced server's dependencies are its own files, and the package declares none.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, readdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";

const run = promisify(execFile);

const ROOT = path.resolve(import.meta.dirname, "../../..");
const DIST_DIR = ".next-standalone";
const DIST = path.join(ROOT, "dist");
const NAME = "fenceline-dashboard";

export type BuiltDashboard = {
  /** The packed tarball, ready for `npm install <tarball>`. */
  readonly tarball: string;
  /** Size of the tarball. */
  readonly bytes: number;
  /** Files in the tarball. */
  readonly files: number;
  /** What the installed package occupies on disk. */
  readonly unpackedBytes: number;
};

async function sizeOf(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = await sizeOf(full);
      files += inner.files;
      bytes += inner.bytes;
    } else {
      files += 1;
      bytes += (await stat(full)).size;
    }
  }
  return { files, bytes };
}

/**
 * Turbopack reaches the server's external packages through hashed aliases, symlinks in the
 * distDir's node_modules (`pg-587764f78a6c7a9c -> ../../node_modules/pg`); npm does not install
 * symlinks from a tarball, so each becomes a copy of what it points at.
 */
async function inlineLinks(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      const target = path.resolve(dir, await readlink(full));
      await rm(full);
      await cp(target, full, { recursive: true, dereference: true });
    } else if (entry.isDirectory()) await inlineLinks(full);
  }
}

/**
 * Builds the standalone web app, stages the package in `<dist>/dashboard` and packs it into
 * `dist` (the repository's dist/ unless a test names its own).
 */
export async function buildDashboardPackage(dist = DIST): Promise<BuiltDashboard> {
  const staging = path.join(dist, "dashboard");
  const { version, engines } = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { version: string; engines: Record<string, string> };
  await run(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "build"], {
    cwd: ROOT,
    env: { ...process.env, FENCELINE_STANDALONE: "1", NEXT_TELEMETRY_DISABLED: "1" },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`next build (standalone) failed:\n${error.stdout ?? ""}\n${error.stderr ?? String(error)}`);
  });

  await rm(staging, { recursive: true, force: true });
  const server = path.join(staging, "server");
  await cp(path.join(ROOT, DIST_DIR, "standalone"), server, { recursive: true, verbatimSymlinks: true });
  await inlineLinks(path.join(server, DIST_DIR, "node_modules"));
  // The standalone output leaves static assets and public/ for the deployer to copy.
  await cp(path.join(ROOT, DIST_DIR, "static"), path.join(server, DIST_DIR, "static"), { recursive: true });
  await cp(path.join(ROOT, "public"), path.join(server, "public"), { recursive: true });

  await build({
    entryPoints: [path.join(ROOT, "lib/cli/dashboard.ts")],
    outfile: path.join(staging, "start.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: path.join(ROOT, "tsconfig.json"),
    // pg's optional native binding is never used.
    external: ["pg-native"],
    // Bundled CommonJS (pg) calls require; an ES module has none of its own.
    banner: { js: `#!/usr/bin/env node\nimport { createRequire as __fencelineRequire } from "node:module";\nconst require = __fencelineRequire(import.meta.url);` },
    logLevel: "error",
  });

  const manifest = {
    name: NAME,
    version,
    description: "Fenceline's dashboard and HTTP API as a standalone server, started by `fenceline dev`.",
    type: "module",
    engines,
    bin: { [NAME]: "start.mjs" },
  };
  await writeFile(path.join(staging, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(
    path.join(staging, "README.md"),
    `# ${NAME}\n\nFenceline's dashboard and HTTP API for development, as a standalone Next.js server. Install it beside \`fenceline\`\n` +
      "(`npm install -D fenceline-dashboard-<version>.tgz`) and `fenceline dev <module>` starts it on the development database,\n" +
      "with demo sign-ins, a worker token and an app key, and prints them. It is not a production deployment: run Fenceline itself for that.\n",
  );

  const { files, bytes: unpackedBytes } = await sizeOf(staging);
  await mkdir(dist, { recursive: true });
  const tarball = path.join(dist, `${NAME}-${version}.tgz`);
  // npm's tarball layout: everything under package/.
  await run("tar", ["-czf", tarball, "--transform", "s,^\\.,package,", "--owner=0", "--group=0", "-C", staging, "."]);
  return { tarball, bytes: (await stat(tarball)).size, files, unpackedBytes };
}
