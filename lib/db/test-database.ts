/**
 * A database per test file, cloned from the template that the global setup keeps at the current
 * migrations (test-template.ts). A clone takes tens of milliseconds, so each file gets real
 * PostgreSQL with the real schema and shares no rows with any other file.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject, test } from "vitest";
import { withDatabase } from "./database";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { createPool, createPrisma } from "./pool";
import { TEMPLATE_DATABASE, TEMPLATE_LOCK_KEY, withAdmin } from "./test-template";

export interface TestDatabase {
  name: string;
  url: string;
  /** A pool of up to 5 connections to this database. */
  pool: pg.Pool;
  /** A Prisma client of this database, for the model reads (connects at its first query). */
  prisma: PrismaClient;
  /** Closes the pool and the Prisma client, and drops the database. */
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  const serverUrl = inject("databaseServerUrl");
  const name = `fenceline_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  await withAdmin(serverUrl, async (admin) => {
    await admin.query("SELECT pg_advisory_lock_shared($1)", [TEMPLATE_LOCK_KEY]);
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(TEMPLATE_DATABASE)}`);
    } finally {
      await admin.query("SELECT pg_advisory_unlock_shared($1)", [TEMPLATE_LOCK_KEY]);
    }
  });

  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, { applicationName: "fenceline-test" });
  const prisma = createPrisma(url, { applicationName: "fenceline-test:prisma" });
  return {
    name,
    url,
    pool,
    prisma,
    drop: async () => {
      await Promise.all([pool.end(), prisma.$disconnect()]);
      await withAdmin(serverUrl, (admin) => admin.query(`DROP DATABASE ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}

/**
 * `dbTest` is vitest's `test` with a `db` fixture: one fresh database per test file, created when
 * a test in the file first asks for `db` and dropped after the file's last test.
 */
export const dbTest = test.extend("db", { scope: "file" }, async ({}, { onCleanup }) => {
  const db = await freshDatabase();
  onCleanup(() => db.drop());
  return db;
});
