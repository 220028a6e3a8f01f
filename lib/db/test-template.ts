/**
 * The template database that every test database is cloned from: `fenceline_template`, holding
 * exactly the current migrations in the engine's schema. It is rebuilt only when the migrations'
 * checksum or the schema's name, stored as the database's comment, changes. No vitest imports:
 * the global setup runs outside test files.
 */
import pg from "pg";
import { withDatabase } from "./database";
import { deployMigrations, migrationsChecksum } from "./migrate.mjs";
import { engineSchema } from "./schema.mjs";

export const TEMPLATE_DATABASE = "fenceline_template";

/**
 * Advisory lock on the server's `postgres` database: held exclusively while the template is
 * rebuilt, shared while it is cloned, so a concurrent test run never clones a half-built one.
 */
export const TEMPLATE_LOCK_KEY = 0x66656e63; // "fenc"

export async function prepareTemplate(serverUrl: string): Promise<void> {
  const schema = engineSchema();
  const stamp = `migrations ${await migrationsChecksum()} in schema ${schema}`;
  const template = pg.escapeIdentifier(TEMPLATE_DATABASE);
  await withAdmin(serverUrl, async (admin) => {
    await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    try {
      const { rows } = await admin.query<{ comment: string | null }>(
        "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
        [TEMPLATE_DATABASE],
      );
      if (rows[0]?.comment === stamp) return;

      await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${template}`);
      await deployMigrations(withDatabase(serverUrl, TEMPLATE_DATABASE), { schema });
      // No one may connect to the template: an open connection makes every clone fail.
      await admin.query(`ALTER DATABASE ${template} ALLOW_CONNECTIONS false`);
      await admin.query(`COMMENT ON DATABASE ${template} IS ${pg.escapeLiteral(stamp)}`);
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]);
    }
  });
}

/** Runs `work` on a connection to the server's `postgres` database. */
export async function withAdmin<T>(serverUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, "postgres"), application_name: "fenceline-test-admin" });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}
