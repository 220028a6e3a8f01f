/**
 * The imports keep the layering (.dependency-cruiser.mjs): nothing in lib/engine imports the
 * console (audit log, auth, the HTTP edge, pages, components) or the demo, and the demo parts
 * written on the public doors import nothing from lib/engine.
 */
import { cruise, type ICruiseResult } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { expect, test } from "vitest";

test("no import crosses a layer the rules forbid", { timeout: 120_000 }, async () => {
  const options = await extractDepcruiseOptions("./.dependency-cruiser.mjs");
  const result = await cruise(["lib", "app", "components"], { ...options, validate: true }, {}, { tsConfig: extractTSConfig("tsconfig.json") });
  const { summary, modules } = result.output as ICruiseResult;
  const violations = summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
  expect(violations).toEqual([]);
  // A cruise that resolved nothing, or not the "@/" aliases, would pass vacuously.
  const unresolved = modules.flatMap((module) => module.dependencies.filter((dependency) => dependency.couldNotResolve && dependency.module.startsWith("@/")).map((dependency) => `${module.source} → ${dependency.module}`));
  expect(unresolved).toEqual([]);
  expect(modules.find((module) => module.source === "lib/audit/append.ts")?.dependencies.map((dependency) => dependency.resolved)).toContain("lib/engine/db.ts");
});
