// Offline migrations. Prisma 7's CLI cannot run `migrate` here: it first downloads a native
// schema-engine binary. The same engine ships on npm compiled to wasm
// (@prisma/schema-engine-wasm), which talks to PostgreSQL through a driver adapter; this module
// drives it with @prisma/adapter-pg. applyMigrations is the engine code behind
// `prisma migrate deploy`, so `_prisma_migrations` rows, checksums and failed-migration blocking
// match the real CLI.
//
// Everything lands in the engine's schema (./schema.mjs): the engine connects with that schema
// as its search_path and as the adapter's schema, so the unqualified migrations create their
// objects there, and `_prisma_migrations` and every introspection are that schema's.
//
// Plain JavaScript, so it loads without a build step; `npm run db:migrate` and friends are its
// command line (lib/cli/migrate.ts).

import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { engineSchema, searchPathOption } from "./schema.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
export const MIGRATIONS_DIR = path.join(root, "prisma", "migrations");
export const SCHEMA_PATH = path.join(root, "prisma", "schema.prisma");

const LOCKFILE = "migration_lock.toml";
const NO_FILTER = { externalTables: [], externalEnums: [] };
const OID_CHAR = 18;
const OID_TEXT = 25;

let engineModule;
const engineTimers = new Set();
let enginesOpen = 0;

/** Loads the wasm engine once per process. */
function loadEngine() {
  engineModule ??= instantiateEngine();
  return engineModule;
}

async function instantiateEngine() {
  // The package entry does `import * as wasm from "./schema_engine_bg.wasm"`, which Node 20
  // cannot load, so the module is instantiated here against the package's JS glue.
  const bindings = await import("@prisma/schema-engine-wasm/schema_engine_bg");
  const glue = createRequire(import.meta.url).resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const bytes = await readFile(path.join(path.dirname(glue), "schema_engine_bg.wasm"));

  // The engine arms 10 s timers (connection timeouts) that it never clears; withEngine clears the
  // leftovers so a finished command exits at once. (unref() is not enough: some engine steps
  // wait on a timer while nothing else keeps the event loop alive.)
  const imports = { ...bindings };
  for (const name of Object.keys(bindings).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
    imports[name] = (callback, ms) => {
      const timer = bindings[name](() => {
        engineTimers.delete(timer);
        callback();
      }, ms);
      engineTimers.add(timer);
      return timer;
    };
  }
  const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": imports });
  bindings.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();

  // The glue hands a Rust panic's message here, then throws a bare "unreachable" RuntimeError
  // that cannot be caught per call; print the message so the crash says what went wrong.
  globalThis.PRISMA_WASM_PANIC_REGISTRY ??= {
    set_message: (message) => console.error(`schema engine panic: ${message}`),
  };
  return bindings;
}

/**
 * Wraps PrismaPg so the engine can introspect and migrate through it:
 * - PostgreSQL's internal "char" type (OID 18, e.g. pg_constraint.contype) is reported as a
 *   Character column: PrismaPg rejects it as an unsupported native type, which fails every
 *   introspection query, and the schema describer reads those columns as chars;
 * - scripts go to the server whole: PrismaPg's executeScript splits on ";", which breaks
 *   `$$ … $$` function bodies. A multi-statement simple query also runs as one implicit
 *   transaction, so a failing migration leaves nothing half-applied;
 * - the engine only says "external connector error", so the last PostgreSQL error is kept for
 *   the message we raise;
 * - every pool opened is remembered so it can be closed: the engine never disposes them.
 */
function engineAdapter(url, schema) {
  const opened = [];
  const state = { lastDatabaseError: null };
  const factory = new PrismaPg(
    { connectionString: url, application_name: "fenceline-migrate", max: 2, options: searchPathOption(schema) },
    { schema },
  );

  // queryRaw hands its query object to performIO, so that object links the two calls.
  const charColumns = new WeakMap();

  const patchQueryable = (queryable) => {
    const performIO = queryable.performIO.bind(queryable);
    queryable.performIO = async (query) => {
      const result = await performIO(query);
      const indexes = [];
      result.fields.forEach((field, index) => {
        if (field.dataTypeID !== OID_CHAR) return;
        field.dataTypeID = OID_TEXT;
        indexes.push(index);
      });
      if (indexes.length > 0) charColumns.set(query, indexes);
      return result;
    };
    const queryRaw = queryable.queryRaw.bind(queryable);
    queryable.queryRaw = async (query) => {
      const result = await queryRaw(query);
      for (const index of charColumns.get(query) ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
      return result;
    };
    const onError = queryable.onError.bind(queryable);
    queryable.onError = (error) => {
      state.lastDatabaseError = error;
      return onError(error);
    };
    return queryable;
  };

  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = patchQueryable(await connect());
    opened.push(adapter);
    adapter.executeScript = async (script) => {
      try {
        await adapter.underlyingDriver().query(script);
      } catch (error) {
        adapter.onError(error);
      }
    };
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => patchQueryable(await startTransaction(isolationLevel));
    return adapter;
  };

  return {
    factory: bindMigrationAwareSqlAdapterFactory(factory),
    state,
    dispose: () => Promise.all(opened.map((adapter) => adapter.dispose())),
  };
}

function describeDatabaseError(error) {
  const parts = [error.message];
  if (error.code) parts.push(`(SQLSTATE ${error.code})`);
  if (error.detail) parts.push(`\nDETAIL: ${error.detail}`);
  if (error.hint) parts.push(`\nHINT: ${error.hint}`);
  if (error.where) parts.push(`\nWHERE: ${error.where}`);
  return parts.join(" ");
}

/** Opens an engine on `url` and `schema`, runs `work`, and always closes the pools and timers it left. */
async function withEngine(url, schema, work) {
  const { SchemaEngine } = await loadEngine();
  const adapter = engineAdapter(url, schema);
  enginesOpen += 1;
  let engine;
  try {
    engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, adapter.factory);
    return await work(engine);
  } catch (error) {
    const cause = adapter.state.lastDatabaseError;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(cause ? `${message}\nPostgreSQL: ${describeDatabaseError(cause)}` : message, { cause: error });
  } finally {
    engine?.free();
    await adapter.dispose();
    enginesOpen -= 1;
    if (enginesOpen === 0) {
      for (const timer of engineTimers) clearTimeout(timer);
      engineTimers.clear();
    }
  }
}

/** The migrations directory in the shape the engine reads it (the CLI does the same reading). */
async function readMigrations(migrationsDir = MIGRATIONS_DIR) {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch((error) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const migrationDirectories = await Promise.all(
    names.map(async (name) => {
      const content = await readFile(path.join(migrationsDir, name, "migration.sql"), "utf8").then(
        (value) => ({ tag: "ok", value }),
        (error) => ({ tag: "error", value: error.message }),
      );
      return { path: name, migrationFile: { path: "migration.sql", content } };
    }),
  );
  const lockfile = await readFile(path.join(migrationsDir, LOCKFILE), "utf8").catch(() => null);
  return {
    baseDir: migrationsDir,
    lockfile: { path: LOCKFILE, content: lockfile },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

/** sha256 over every migration's name and SQL: changes whenever a migration is added or edited. */
export async function migrationsChecksum(migrationsDir = MIGRATIONS_DIR) {
  const { migrationDirectories } = await readMigrations(migrationsDir);
  const hash = createHash("sha256");
  for (const { path: name, migrationFile } of migrationDirectories) {
    hash.update(`${name}\0${migrationFile.content.value}\0`);
  }
  return hash.digest("hex");
}

/** The first migration's name: a `_prisma_migrations` that lists it is Fenceline's history. */
const FIRST_MIGRATION = "20261129160000_engine";

/**
 * Makes the engine's schema ready for the migration engine: creates it, and when the database was
 * migrated before Fenceline had a schema of its own (everything in public), moves the migration
 * history into it, so the engine sees what was applied; the migration that follows moves the rest
 * (20261202100000_engine_in_its_own_schema). An adopter's own `_prisma_migrations` in public
 * lists no Fenceline migration and stays where it is.
 */
async function prepareSchema(url, schema) {
  const client = new pg.Client({ connectionString: url, application_name: "fenceline-migrate" });
  await client.connect();
  try {
    await client.query("BEGIN");
    // Two processes migrating at once: the second waits, then finds the schema ready.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('fenceline migrate ' || $1))", [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    if (schema !== "public") {
      const { rows } = await client.query(
        `SELECT to_regclass($1) IS NULL AS missing, to_regclass('public._prisma_migrations') IS NOT NULL AS in_public`,
        [`${schema}._prisma_migrations`],
      );
      const [{ missing, in_public: inPublic }] = rows;
      if (missing && inPublic) {
        const { rowCount } = await client.query("SELECT 1 FROM public._prisma_migrations WHERE migration_name = $1", [FIRST_MIGRATION]);
        if (rowCount > 0) await client.query(`ALTER TABLE public._prisma_migrations SET SCHEMA ${schema}`);
      }
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations (`prisma migrate deploy`) in the engine's schema, by default
 * FENCELINE_DB_SCHEMA's. Returns the names just applied.
 */
export async function deployMigrations(url, { migrationsDir = MIGRATIONS_DIR, schema = engineSchema() } = {}) {
  const migrationsList = await readMigrations(migrationsDir);
  await prepareSchema(url, schema);
  const { appliedMigrationNames } = await withEngine(url, schema, (engine) =>
    engine.applyMigrations({ migrationsList, filters: NO_FILTER }),
  );
  return appliedMigrationNames;
}

/** The engine's view of the migration history against the directory (`prisma migrate status`). */
export async function migrationStatus(url, { migrationsDir = MIGRATIONS_DIR, schema = engineSchema() } = {}) {
  const migrationsList = await readMigrations(migrationsDir);
  return withEngine(url, schema, (engine) =>
    engine.diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: NO_FILTER }),
  );
}

/** Marks a failed migration rolled back so deploy retries it (`prisma migrate resolve --rolled-back`). */
export async function markRolledBack(url, migrationName, { schema = engineSchema() } = {}) {
  await withEngine(url, schema, (engine) => engine.markMigrationRolledBack({ migrationName }));
}

/**
 * SQL that would turn the live database at `url` into what the Prisma schema describes; "" when
 * they agree. Objects the schema cannot express (CHECKs, triggers, functions) are not compared.
 */
export async function diffDatabaseToSchema(url, { schemaPath = SCHEMA_PATH, schema = engineSchema() } = {}) {
  const prismaSchema = { path: schemaPath, content: await readFile(schemaPath, "utf8") };
  const { stdout } = await withEngine(url, schema, (engine) =>
    engine.diff({
      // "schemaDatasource" is the live database, reached through the driver adapter.
      from: { tag: "schemaDatasource", files: [prismaSchema], configDir: root },
      to: { tag: "schemaDatamodel", files: [prismaSchema] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    }),
  );
  return isEmptyScript(stdout ?? "") ? "" : stdout;
}

/** The engine prints a comment-only script when there is nothing to do. */
function isEmptyScript(script) {
  return script
    .split("\n")
    .map((line) => line.trim())
    .every((line) => line === "" || line.startsWith("--"));
}

/**
 * Writes a new migration from the schema (`prisma migrate dev --create-only`). The engine's
 * createMigration needs a shadow database it cannot create through a driver adapter, so this
 * applies pending migrations to `url` and diffs that live database against the schema instead.
 * `url` must therefore hold no changes made outside the migrations. Returns the new folder, or
 * null when the schema needs no change.
 */
export async function createMigration(url, name, { migrationsDir = MIGRATIONS_DIR, schemaPath = SCHEMA_PATH } = {}) {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`migration name must be snake_case, got "${name}"`);
  await deployMigrations(url, { migrationsDir });
  const script = await diffDatabaseToSchema(url, { schemaPath });
  if (script === "") return null;

  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const folder = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, "migration.sql"), script);
  await writeFile(path.join(migrationsDir, LOCKFILE), 'provider = "postgresql"\n', { flag: "wx" }).catch((error) => {
    if (error.code !== "EEXIST") throw error;
  });
  return folder;
}
