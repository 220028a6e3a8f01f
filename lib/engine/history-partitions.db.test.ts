/**
 * The migration that partitions the history tables by month (20261204500000) moves the rows a
 * database already holds: every row keeps its id and lands in its month's partition, the
 * indexes are rebuilt on every partition, ids continue after the highest one, and the claim's
 * insert routes to the current month.
 */
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { withDatabase } from "@/lib/db/database";
import { deployMigrations, MIGRATIONS_DIR } from "@/lib/db/migrate.mjs";
import { createPool } from "@/lib/db/pool";
import { withAdmin } from "@/lib/db/test-template";

const PARTITIONING = "20261204500000_history_partitioned_by_time";
const name = `fenceline_test_partitioning_${randomBytes(4).toString("hex")}`;
let url: string;
let pool: pg.Pool;
let earlier: string;

beforeAll(async () => {
  const serverUrl = inject("databaseServerUrl");
  await withAdmin(serverUrl, (admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  url = withDatabase(serverUrl, name);
  pool = createPool(url, { applicationName: "fenceline-test" });
  // The migrations before this one, as a database migrated before it would have them.
  earlier = await mkdtemp(path.join(tmpdir(), "fenceline-migrations-"));
  for (const entry of await readdir(MIGRATIONS_DIR)) {
    if (entry < PARTITIONING) await cp(path.join(MIGRATIONS_DIR, entry), path.join(earlier, entry), { recursive: true });
  }
});

afterAll(async () => {
  await pool?.end();
  if (earlier) await rm(earlier, { recursive: true, force: true });
  await withAdmin(inject("databaseServerUrl"), (admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
});

test("existing history moves into monthly partitions with its ids, indexes and append-only guard", async () => {
  await deployMigrations(url, { migrationsDir: earlier });
  const step = "00000000-0000-0000-0000-000000000001";
  for (const age of ["100 days", "40 days", "0 days"]) {
    await pool.query(
      `INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, at)
       VALUES ($1, 1, 1, gen_random_uuid(), 'renewed', now() - $2::interval)`,
      [step, age],
    );
    await pool.query(
      `INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence, observed_expires_at, decided_at, decided_by)
       VALUES ($1, gen_random_uuid(), 1, 1, 'lease_expired', 'make_ready', '{}', now(), now() - $2::interval, 'test')`,
      [step, age],
    );
  }
  const before = await pool.query("SELECT id, at FROM lease_event ORDER BY id");

  await deployMigrations(url);

  const after = await pool.query("SELECT id, at, tableoid::regclass::text AS partition, to_char(at AT TIME ZONE 'UTC', 'YYYY_MM') AS month FROM lease_event ORDER BY id");
  expect(after.rows.map(({ id, at }) => ({ id, at }))).toEqual(before.rows);
  for (const row of after.rows) expect(row.partition).toBe(`lease_event_${row.month}`);
  const decisions = await pool.query("SELECT tableoid::regclass::text AS partition, to_char(decided_at AT TIME ZONE 'UTC', 'YYYY_MM') AS month FROM recovery_decision");
  expect(decisions.rows).toHaveLength(3);
  for (const row of decisions.rows) expect(row.partition).toBe(`recovery_decision_${row.month}`);

  const { rows: kinds } = await pool.query(
    "SELECT relname, relkind FROM pg_class WHERE relname IN ('lease_event', 'fencing_rejection', 'late_observation', 'recovery_decision') AND relnamespace = current_schema()::regnamespace ORDER BY relname",
  );
  expect(kinds.map((row) => row.relkind)).toEqual(["p", "p", "p", "p"]);
  const { rows: indexes } = await pool.query(
    "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'lease_event' ORDER BY indexname",
  );
  expect(indexes.map((row) => row.indexname)).toEqual(["lease_event_at_idx", "lease_event_pkey", "lease_event_step_id_fencing_term_idx"]);
  const { rows: keys } = await pool.query(
    "SELECT pg_get_constraintdef(oid) AS key FROM pg_constraint WHERE conname = 'lease_event_pkey' AND conrelid = 'lease_event'::regclass",
  );
  expect(keys[0].key).toBe("PRIMARY KEY (id, at)");

  const next = await pool.query(
    "INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind) VALUES ($1, 2, 1, gen_random_uuid(), 'acquired') RETURNING id, tableoid::regclass::text AS partition, to_char(now() AT TIME ZONE 'UTC', 'YYYY_MM') AS month",
    [step],
  );
  expect(BigInt(next.rows[0].id)).toBe(BigInt(before.rows.at(-1).id) + 1n);
  expect(next.rows[0].partition).toBe(`lease_event_${next.rows[0].month}`);
  await expect(pool.query("DELETE FROM lease_event")).rejects.toThrow(/append-only/);
});
