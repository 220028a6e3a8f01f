// The PostgreSQL schema that holds Fenceline's tables, functions and enums, so an adopter can
// point DATABASE_URL at a database that has its own tables (docs/decisions/008). Statements and
// migrations stay unqualified; every connection Fenceline opens has this schema, alone, as its
// search_path. Plain JavaScript with no imports: lib/db/migrate.mjs runs without a build step.

export const DEFAULT_ENGINE_SCHEMA = "fenceline";

/** Lower-case identifiers only: they need no quoting in SQL or in a connection's options. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Returns `name` if it can name the engine's schema; throws a message saying what is allowed. */
export function checkSchemaName(name, source = "schema name") {
  if (!SCHEMA_NAME.test(name) || name.startsWith("pg_")) {
    throw new Error(`${source} must be a lower-case PostgreSQL identifier (a-z, 0-9, _; at most 63; not pg_…), got "${name}"`);
  }
  return name;
}

/** FENCELINE_DB_SCHEMA, or "fenceline". */
export function engineSchema(env = process.env) {
  const configured = env.FENCELINE_DB_SCHEMA;
  if (configured === undefined || configured === "") return DEFAULT_ENGINE_SCHEMA;
  return checkSchemaName(configured, "FENCELINE_DB_SCHEMA");
}

/**
 * The startup option that gives a connection `schema` as its only search_path: node-postgres's
 * and @prisma/adapter-pg's `options`. The engine's names then never resolve to a table of the
 * same name elsewhere in the database (pg_catalog is always searched first, pg_temp is unused).
 */
export function searchPathOption(schema) {
  return `-c search_path=${checkSchemaName(schema)}`;
}
