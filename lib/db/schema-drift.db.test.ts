/**
 * prisma/schema.prisma and prisma/migrations describe one schema. The migrations are what runs;
 * the schema is what Prisma Client is generated from. If they disagree, the client reads and
 * writes columns the database does not have, so a clone of the migrated template must diff
 * empty against the schema. The engine compares the engine's PostgreSQL schema (FENCELINE_DB_SCHEMA,
 * lib/db/schema.mjs), where the migrations put everything.
 *
 * No allowlist is needed: the engine compares only what a Prisma schema can express. Checked with
 * @prisma/schema-engine-wasm 8.1.0-2: the migrations' partial unique indexes, CHECK constraints,
 * identity columns, SQL functions and triggers produce no diff. Should a newer engine start
 * reporting them, list those objects here by name, each with the reason, and filter only those.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { diffDatabaseToSchema, SCHEMA_PATH } from "./migrate.mjs";
import { dbTest as test } from "./test-database";

test("the migrated database matches prisma/schema.prisma", async ({ db }) => {
  expect(await diffDatabaseToSchema(db.url)).toBe("");
});

test("the drift check sees a model the migrations lack", async ({ db }) => {
  // Guards the test above against passing vacuously (e.g. an engine that introspects nothing).
  const schemaPath = path.join(tmpdir(), `fenceline-drift-${process.pid}.prisma`);
  const schema = await readFile(SCHEMA_PATH, "utf8");
  await writeFile(schemaPath, `${schema}\nmodel DriftProbe {\n  id Int @id\n}\n`);
  try {
    expect(await diffDatabaseToSchema(db.url, { schemaPath })).toContain('CREATE TABLE "DriftProbe"');
  } finally {
    await rm(schemaPath);
  }
});
