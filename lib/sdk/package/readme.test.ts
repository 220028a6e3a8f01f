/**
 * The package guide's "Install" section says what each door needs and what an install brings:
 * it must name every dependency and peer the built package.json declares, each in its role, so
 * the guide cannot fall behind the package (it once said "needs only zod" beside three
 * dependencies).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { DEPENDENCIES, OPTIONAL_PEERS, PEERS } from "./build";

const readme = readFileSync(path.join(import.meta.dirname, "README.md"), "utf8");
const install = readme.slice(readme.indexOf("## Install"), readme.indexOf("\n## ", readme.indexOf("## Install") + 1));
const linesNaming = (name: string) => install.split("\n").filter((line) => line.includes(`\`${name}\``));

test("the Install section names every dependency as one that comes with the install", () => {
  for (const name of DEPENDENCIES) {
    const lines = linesNaming(name);
    expect(lines.length, `${name} is not named in the Install section`).toBeGreaterThan(0);
    expect(lines.some((line) => /comes with|dependencies\)|\| `pg`, `ajv` \|/.test(line)), `${name} is not said to come with the install`).toBe(true);
  }
});

test("the Install section names every peer, the optional ones as optional", () => {
  for (const name of Object.keys(PEERS)) {
    const lines = linesNaming(name);
    expect(lines.length, `${name} is not named in the Install section`).toBeGreaterThan(0);
    const optional = OPTIONAL_PEERS.includes(name);
    expect(lines.some((line) => (optional ? /optional peer/ : /\ba peer\b/).test(line)), `${name} is not said to be ${optional ? "an optional peer" : "a peer"}`).toBe(true);
  }
});

test("no door is said to need only zod while the package depends on more", () => {
  expect(readme).not.toMatch(/needs only zod/i);
});
