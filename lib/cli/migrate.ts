/**
 * `npm run db:migrate` (deploy) and `npm run db:migration:create -- <name>` (create): the command
 * line of lib/db/migrate.mjs, on the database every command uses.
 */
import path from "node:path";
import { createMigration, deployMigrations, diffDatabaseToSchema, markRolledBack, migrationStatus } from "@/lib/db/migrate.mjs";
import { command, DATABASE_ENVIRONMENT, resolveAppDatabase, UsageError } from "./command";

const { positionals } = command({
  name: "npm run db:migrate",
  summary: "applies, checks and writes the database migrations in prisma/migrations.",
  positionals: "<command> [name]",
  usage: [
    "npm run db:migrate                          (deploy)",
    "npm run db:migration:create -- <name>       (create)",
    "node --import tsx lib/cli/migrate.ts <command> [name]",
  ],
  options: {},
  details: [
    "Commands:",
    "  deploy                      apply pending migrations",
    "  status                      show the migration history against prisma/migrations (exit 1 when they differ)",
    "  create <name>               apply pending, then write a migration for the schema's changes",
    "  diff                        print SQL from the live database to prisma/schema.prisma",
    "  resolve-rolled-back <name>  mark a failed migration rolled back so deploy retries it",
  ],
  environment: DATABASE_ENVIRONMENT,
  examples: ["npm run db:migrate", "npm run db:migration:create -- add_step_priority"],
});

const [subcommand, argument, ...extra] = positionals;
const needsName = subcommand === "create" || subcommand === "resolve-rolled-back";
const subcommands: Record<string, (url: string) => Promise<void>> = {
  deploy: async (url) => {
    const applied = await deployMigrations(url);
    console.log(applied.length ? `applied: ${applied.join(", ")}` : "no pending migrations");
  },
  status: async (url) => {
    const status = await migrationStatus(url);
    console.log(JSON.stringify(status, null, 2));
    const inSync = status.history === null && status.failedMigrationNames.length === 0 && status.editedMigrationNames.length === 0;
    if (!inSync) process.exitCode = 1;
  },
  create: async (url) => {
    const folder = await createMigration(url, argument!);
    console.log(folder ? `wrote ${path.relative(process.cwd(), folder)}/migration.sql` : "schema matches the migrations: nothing to write");
  },
  diff: async (url) => {
    process.stdout.write((await diffDatabaseToSchema(url)) || "-- no difference\n");
  },
  "resolve-rolled-back": async (url) => {
    await markRolledBack(url, argument!);
    console.log(`marked ${argument} rolled back`);
  },
};

const run = subcommand === undefined ? undefined : subcommands[subcommand];
if (!run) throw new UsageError(subcommand === undefined ? "which command? (deploy, status, create, diff, resolve-rolled-back)" : `unknown command "${subcommand}"`);
if (needsName && !argument) throw new UsageError(`${subcommand} needs a name`);
if (extra.length > 0 || (!needsName && argument !== undefined)) throw new UsageError(`unexpected argument "${needsName ? extra[0] : argument}"`);
await run((await resolveAppDatabase()).url);
