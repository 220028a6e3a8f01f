/**
 * `npm run docs`: writes the API reference of the `fenceline` package (docs/adopting/reference,
 * Markdown) from the TSDoc of every export of its doors with TypeDoc, then checks every link of
 * the documentation. `--check` (the `docs` runner of `npm test`) writes nothing: it fails when the
 * committed reference differs from what the code says now.
 *
 * TypeDoc fails on an export without documentation, a `{@link}` that names nothing, and a type a
 * public signature uses that no door exports. The link check reads README.md, docs/, the package
 * guide and the quickstart: a relative link must name a file that exists and, with a `#`, a
 * heading of that file (GitHub's anchors); web links are not fetched.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import MarkdownIt from "markdown-it";
import { Application, LogLevel } from "typedoc";
import { command, CommandError, exit } from "./command";

const { values } = command({
  name: "npm run docs",
  summary: "writes the API reference (docs/adopting/reference) from the doors' TSDoc with TypeDoc, then checks every link of README.md, docs/, the package guide and the quickstart.",
  options: { check: { type: "boolean", description: "write nothing; fail when the committed reference is out of date (npm test runs this)" } },
  environment: [],
  examples: ["npm run docs", "npm run docs -- --check"],
});

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const REFERENCE_DIR = path.join(ROOT, "docs/adopting/reference");
/** The pages whose links are checked, besides every .md under docs/. */
const PAGES = ["README.md", "lib/sdk/package/README.md", "examples/quickstart/README.md", "examples/orders/README.md", "lib/scenarios/README.md"];

/** The package's doors: lib/sdk/index.ts and lib/sdk/<door>/index.ts, as lib/sdk/package/build.ts packs them. */
async function doors(): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, "lib/sdk"), { withFileTypes: true });
  const named = [];
  for (const entry of entries) {
    const index = path.join(ROOT, "lib/sdk", entry.name, "index.ts");
    if (entry.isDirectory() && entry.name !== "package" && (await exists(index))) named.push(index);
  }
  return [path.join(ROOT, "lib/sdk/index.ts"), ...named.sort()];
}

const exists = (file: string) => stat(file).then(() => true, () => false);

async function writeReference(out: string): Promise<void> {
  const app = await Application.bootstrapWithPlugins({
    entryPoints: await doors(),
    tsconfig: path.join(ROOT, "tsconfig.package.json"),
    plugin: ["typedoc-plugin-markdown"],
    out,
    name: "fenceline",
    readme: "none",
    entryFileName: "README.md",
    // Source links would carry line numbers, and change with every edit of a file.
    disableSources: true,
    excludePrivate: true,
    excludeInternal: true,
    hidePageHeader: true,
    hideBreadcrumbs: false,
    validation: { notExported: true, invalidLink: true, notDocumented: true, rewrittenLink: true, unusedMergeModuleWith: true },
    // Every export carries its TSDoc (the team's rule); a property is documented where it needs it.
    requiredToBeDocumented: ["Enum", "Variable", "Function", "Class", "Interface", "TypeAlias", "Namespace"],
    // Named by public signatures without being exports of a door: shown by their shape, not a page.
    intentionallyNotExported: [
      "AttemptMode",
      "EVENT_WAIT_STATES",
      "FAIRNESS_RULES",
      "HeaderSource",
      "MilestoneStatus",
      "NewName",
      "OperationClass",
      "REPETITION_POLICIES",
      "ResultsOf",
      "RunWorkerOptions",
      "TIMER_STATES",
      "TrackingHeadline",
      "TrackingTone",
      "WEBHOOK_EVENT_TYPES",
      "stepDetailSchema",
    ],
    treatWarningsAsErrors: true,
    logLevel: LogLevel.Warn,
  } as Parameters<typeof Application.bootstrapWithPlugins>[0]);
  const project = await app.convert();
  if (!project) throw new CommandError("TypeDoc could not read the doors (its messages are above)");
  app.validate(project);
  if (app.logger.hasErrors() || app.logger.hasWarnings()) throw new CommandError("the API reference has problems (TypeDoc's messages are above): document the export, or fix the link");
  await rm(out, { recursive: true, force: true });
  await app.generateOutputs(project);
  if (app.logger.hasErrors()) throw new CommandError("TypeDoc could not write the reference (its messages are above)");
}

async function* markdownFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* markdownFiles(full);
    else if (entry.name.endsWith(".md")) yield full;
  }
}

/** Files whose contents differ between two trees, or that only one holds, relative to them. */
async function differences(expected: string, actual: string): Promise<string[]> {
  const list = async (dir: string) => {
    const files = new Map<string, string>();
    if (!(await exists(dir))) return files;
    for await (const file of markdownFiles(dir)) files.set(path.relative(dir, file), await readFile(file, "utf8"));
    return files;
  };
  const [want, have] = await Promise.all([list(expected), list(actual)]);
  return [...new Set([...want.keys(), ...have.keys()])].filter((file) => want.get(file) !== have.get(file)).sort();
}

const markdown = new MarkdownIt({ html: true });

/** The anchors GitHub gives a Markdown file's headings. */
function anchorsOf(source: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = markdown.parse(source, {});
  const anchors = new Set<string>();
  tokens.forEach((token, index) => {
    if (token.type !== "heading_open") return;
    const inline = tokens[index + 1];
    const text = (inline?.children ?? []).filter((child) => child.type === "text" || child.type === "code_inline").map((child) => child.content).join("");
    anchors.add(slugger.slug(text));
  });
  // Explicit anchors: <a id="…"> or <a name="…"> (TypeDoc's Markdown writes some).
  for (const match of source.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

/** Every link and image target in a Markdown file, with its line. */
function linksOf(source: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  for (const token of markdown.parse(source, {})) {
    for (const child of token.children ?? []) {
      const target = child.type === "link_open" ? child.attrGet("href") : child.type === "image" ? child.attrGet("src") : null;
      if (target) found.push({ target, line: (token.map?.[0] ?? 0) + 1 });
    }
  }
  return found;
}

async function brokenLinks(): Promise<string[]> {
  const files = [...PAGES.map((page) => path.join(ROOT, page))];
  for await (const file of markdownFiles(path.join(ROOT, "docs"))) files.push(file);
  const anchorCache = new Map<string, Set<string>>();
  const anchors = async (file: string) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(await readFile(file, "utf8")));
    return anchorCache.get(file)!;
  };
  const broken: string[] = [];
  for (const file of files) {
    for (const { target, line } of linksOf(await readFile(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not fetched
      const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
      const resolved = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart.split("?")[0]!));
      const where = `${path.relative(ROOT, file)}:${line}: ${target}`;
      if (!resolved.startsWith(ROOT) || !(await exists(resolved))) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !(await anchors(resolved)).has(anchor)) broken.push(`${where} (no such heading in ${path.relative(ROOT, resolved)})`);
    }
  }
  return broken;
}

async function main(): Promise<void> {
  if (values.check) {
    const scratch = await mkdtemp(path.join(tmpdir(), "fenceline-reference-"));
    try {
      await writeReference(scratch);
      const stale = await differences(scratch, REFERENCE_DIR);
      if (stale.length > 0) throw new CommandError(`docs/adopting/reference is out of date with the doors' TSDoc (${stale.slice(0, 5).join(", ")}${stale.length > 5 ? ", …" : ""}): run npm run docs`);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } else {
    await writeReference(REFERENCE_DIR);
    console.log(`wrote ${path.relative(ROOT, REFERENCE_DIR)}`);
  }
  const broken = await brokenLinks();
  if (broken.length > 0) throw new CommandError(`${broken.length} broken link(s):\n  ${broken.join("\n  ")}`);
  console.log(`the API reference is current and every link of the documentation resolves`);
}

await main();
await exit(0);
