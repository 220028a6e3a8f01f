/**
 * The demo is one adopter among others: nothing in the engine, the routes or the components
 * names its workflow kind, its steps or its destinations. The names come from the demo's own
 * definitions, so a renamed step is still caught. Tests and their support are not product code:
 * they define adapters of their own, named after the contracts they stand for.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { demoAdapters } from "./adapters";
import { purchaseWorkflow } from "./purchase";
import { deliveryWorkflow } from "./workflow";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CONFINED = ["lib/engine", "app", "components"];

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    // Tests and their support define adapters of their own, named after the contract they stand for.
    .filter((entry) => entry.isFile() && /\.(ts|tsx)$/.test(entry.name) && !/(\.test\.tsx?|test-support\.ts)$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

test("no file under lib/engine, app/ or components/ names the demo's kinds, steps or destinations", () => {
  const adapters = demoAdapters("http://127.0.0.1:9");
  const workflows = [deliveryWorkflow(adapters), purchaseWorkflow(adapters)];
  const quoted = (name: string) => new RegExp(`["'\`]${name}["'\`]`);
  const patterns: [string, RegExp][] = [
    // Quoted, as a kind is named in code: "delivery" is also a plain word (a webhook's delivery).
    ...workflows.map((workflow): [string, RegExp] => [`kind ${workflow.kind}`, quoted(workflow.kind)]),
    ["the input field deliverVia", /deliverVia/],
    ["the synthetic destination service", /synthetic destination/i],
    ...workflows.flatMap((workflow) => workflow.steps.map((step): [string, RegExp] => [`step ${step.name}`, quoted(step.name)])),
    ...Object.values(adapters).map((adapter): [string, RegExp] => [`destination ${adapter.name}`, quoted(adapter.name)]),
  ];
  const found: string[] = [];
  for (const file of CONFINED.flatMap(sourcesUnder)) {
    const lines = readFileSync(path.join(ROOT, file), "utf8").split("\n");
    lines.forEach((line, index) => {
      for (const [what, pattern] of patterns) if (pattern.test(line)) found.push(`${file}:${index + 1} names ${what}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});
