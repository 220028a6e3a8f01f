// Types for migrate.mjs, which stays plain JavaScript so `node lib/db/migrate.mjs` needs no build.

export interface MigrationHistory {
  /** Applied migrations whose file changed since. */
  editedMigrationNames: string[];
  failedMigrationNames: string[];
  hasMigrationsTable: boolean;
  /** null when the database and the directory agree. */
  history:
    | null
    | { diagnostic: "databaseIsBehind"; unappliedMigrationNames: string[] }
    | { diagnostic: "migrationsDirectoryIsBehind"; unpersistedMigrationNames: string[] }
    | {
        diagnostic: "historiesDiverge";
        lastCommonMigrationName: string | null;
        unpersistedMigrationNames: string[];
        unappliedMigrationNames: string[];
      };
}

export const MIGRATIONS_DIR: string;
export const SCHEMA_PATH: string;

/** `schema`: the engine's PostgreSQL schema; FENCELINE_DB_SCHEMA's (default "fenceline") when omitted. */
export function migrationsChecksum(migrationsDir?: string): Promise<string>;
export function deployMigrations(url: string, options?: { migrationsDir?: string; schema?: string }): Promise<string[]>;
export function migrationStatus(url: string, options?: { migrationsDir?: string; schema?: string }): Promise<MigrationHistory>;
export function markRolledBack(url: string, migrationName: string, options?: { schema?: string }): Promise<void>;
export function diffDatabaseToSchema(url: string, options?: { schemaPath?: string; schema?: string }): Promise<string>;
export function createMigration(
  url: string,
  name: string,
  options?: { migrationsDir?: string; schemaPath?: string; schema?: string },
): Promise<string | null>;
