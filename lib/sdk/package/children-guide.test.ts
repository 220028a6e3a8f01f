/**
 * The child requests guide (docs/adopting/children.md) shows code that compiles against the
 * package: each of its TypeScript examples must be a part of a file in examples/orders/src, which
 * the package scenario type-checks from the tarball (and runs). Whitespace at line ends and
 * indentation aside.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const guide = readFileSync(path.join(ROOT, "docs/adopting/children.md"), "utf8");
const sourceDir = path.join(ROOT, "examples/orders/src");
const normalize = (text: string) => text.split("\n").map((line) => line.trim()).filter(Boolean).join("\n");
const sources = readdirSync(sourceDir).filter((name) => name.endsWith(".ts")).map((name) => normalize(readFileSync(path.join(sourceDir, name), "utf8")));
const examples = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

test("the guide has its example, and it is code of examples/orders", () => {
  expect(examples.length).toBeGreaterThanOrEqual(1);
  for (const example of examples) expect(sources.some((source) => source.includes(normalize(example))), example).toBe(true);
});
