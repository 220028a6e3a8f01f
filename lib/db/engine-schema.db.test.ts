/**
 * The engine in its own schema (docs/decisions/008): Fenceline installs beside an adopter's own
 * tables without touching them, even ones named like its own; every object it creates, and its
 * migration history, land in the configured schema; and a database migrated before the engine had
 * a schema of its own is moved into it with its rows and history intact.
 *
 * Each test migrates a database of its own from empty (not the template), as an adopter's
 * `npm run db:migrate` would.
 */
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterEach, expect, inject, test } from "vitest";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { beginInvocation, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { createWorkflows } from "@/lib/engine/workflow";
import { withDatabase } from "./database";
import { deployMigrations, MIGRATIONS_DIR, migrationStatus } from "./migrate.mjs";
import { createPool } from "./pool";
import { searchPathOption } from "./schema.mjs";
import { withAdmin } from "./test-template";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An empty database, dropped after the test. */
async function emptyDatabase(): Promise<string> {
  const serverUrl = inject("databaseServerUrl");
  const name = `fenceline_schema_${process.pid}_${randomBytes(4).toString("hex")}`;
  await withAdmin(serverUrl, (admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  cleanups.push(() => withAdmin(serverUrl, (admin) => admin.query(`DROP DATABASE ${pg.escapeIdentifier(name)} WITH (FORCE)`)).then(() => undefined));
  return withDatabase(serverUrl, name);
}

function poolFor(url: string, schema: string): pg.Pool {
  const pool = createPool(url, { applicationName: "fenceline-schema-test", schema });
  cleanups.push(() => pool.end());
  return pool;
}

/** A plain connection with the server's default search_path: what anyone else's code sees. */
async function outsider<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Relations, functions and types per schema, outside PostgreSQL's own. */
const objectsBySchema = (client: pg.Client) =>
  client
    .query<{ schema: string; kind: string; names: string[] }>(
      `SELECT schema, kind, array_agg(name ORDER BY name) AS names FROM (
         SELECT n.nspname AS schema, 'relation ' || c.relkind::text AS kind, c.relname::text AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         UNION ALL
         SELECT n.nspname, 'function', p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         UNION ALL
         SELECT n.nspname, 'enum', t.typname::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typtype = 'e'
       ) o
       WHERE schema NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
       GROUP BY schema, kind ORDER BY schema, kind`,
    )
    .then(({ rows }) => rows);

/**
 * The engine's path through one request: create, claim, the three checkpoints, a receipt; and a
 * second step whose lease expires and is decided by the recovery scan. An adapter and kind of its own, so
 * a second run claims only its own steps.
 */
async function runTheEngine(pool: pg.Pool): Promise<void> {
  const adapter = `schema-${randomBytes(4).toString("hex")}`;
  const step = { name: "only", adapter, operation: "noop", stepClass: "pure" };
  const [done, recovered] = await createWorkflows(pool, [
    { kind: adapter, input: { n: 1 }, requester: "test", steps: [step] },
    { kind: adapter, input: { n: 2 }, requester: "test", steps: [step] },
  ]);
  const session = await registerSession(pool, "direct");
  expect(await claimSteps(pool, session, [{ kind: adapter, version: 1 }], 2)).toHaveLength(2);
  const lease = { stepId: done!.stepIds.get("only")!, fencingTerm: 1n, sessionId: session };
  await persistRequestIdentity(pool, lease, "fl-schema", "1");
  await beginInvocation(pool, lease);
  await observeResponse(pool, lease, "ext-schema", { ok: true });
  const [receipt] = await commitReceipts(pool, session, [{ lease, conclusion: { kind: "effect", externalReference: "ext-schema", result: { ok: true }, verification: "direct_response" } }]);
  expect(receipt).toMatchObject({ committed: true });
  const expiring = recovered!.stepIds.get("only")!;
  await setLeaseExpiry(pool, expiring, -1);
  const decided = await runRecoveryScan(pool, { batchSize: 10, decidedBy: "test" });
  expect(decided.map((d) => d.stepId)).toEqual([expiring]);
  const { rows } = await pool.query("SELECT state::text FROM step WHERE id = ANY($1::uuid[]) ORDER BY id = $2", [[lease.stepId, expiring], lease.stepId]);
  expect(rows).toEqual([{ state: "ready" }, { state: "completed" }]);
}

test("the engine runs beside an adopter's own step, lease and attempt tables, and leaves them as they were", async () => {
  const url = await emptyDatabase();
  const adopters = async (client: pg.Client) => ({
    rows: (await client.query("SELECT 'step' AS t, to_jsonb(s) AS row FROM public.step s UNION ALL SELECT 'lease', to_jsonb(l) FROM public.lease l UNION ALL SELECT 'attempt', to_jsonb(a) FROM public.attempt a UNION ALL SELECT '_prisma_migrations', to_jsonb(m) FROM public._prisma_migrations m ORDER BY 1")).rows,
    columns: (await client.query("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2")).rows,
    objects: (await objectsBySchema(client)).filter((o) => o.schema === "public"),
  });
  const before = await outsider(url, async (client) => {
    await client.query(`
      CREATE TABLE step (id serial PRIMARY KEY, title text NOT NULL);
      CREATE TABLE lease (id serial PRIMARY KEY, tenant text NOT NULL, ends_on date NOT NULL);
      CREATE TABLE attempt (id bigint PRIMARY KEY, score int);
      -- The adopter migrates its own tables with Prisma too: its history is not Fenceline's.
      CREATE TABLE _prisma_migrations (id text PRIMARY KEY, migration_name text NOT NULL);
      INSERT INTO step (title) VALUES ('onboard a customer');
      INSERT INTO lease (tenant, ends_on) VALUES ('acme', '2027-01-31');
      INSERT INTO attempt (id, score) VALUES (1, 42);
      INSERT INTO _prisma_migrations VALUES ('m1', '20250101000000_adopters_own')`);
    return adopters(client);
  });

  await deployMigrations(url);
  await runTheEngine(poolFor(url, "fenceline"));

  await outsider(url, async (client) => {
    expect(await adopters(client)).toEqual(before);
    const fenceline = (await objectsBySchema(client)).filter((o) => o.schema === "fenceline");
    expect(fenceline.find((o) => o.kind === "relation r")?.names).toEqual(expect.arrayContaining(["_prisma_migrations", "receipt_step", "step", "workflow"]));
    // Partitioned by time (decision 017): the parents, their months in partitions beside them.
    expect(fenceline.find((o) => o.kind === "relation p")?.names).toEqual(expect.arrayContaining(["attempt", "lease_event", "receipt"]));
    // The lease is read from the attempt that carries it (decision 007).
    expect(fenceline.find((o) => o.kind === "relation v")?.names).toEqual(expect.arrayContaining(["lease", "lease_history"]));
    expect(fenceline.find((o) => o.kind === "function")?.names).toContain("fl_current_epoch");
    expect(fenceline.find((o) => o.kind === "enum")?.names).toContain("step_state");
  });
});

test("a schema of another name holds every object and the migration history; no other schema gains one", async () => {
  const url = await emptyDatabase();
  const fresh = await outsider(url, objectsBySchema);
  await deployMigrations(url, { schema: "acme_jobs" });
  const pool = poolFor(url, "acme_jobs");
  await runTheEngine(pool);

  const after = await outsider(url, objectsBySchema);
  expect(after.filter((o) => o.schema !== "acme_jobs")).toEqual(fresh);
  expect(after.filter((o) => o.schema === "acme_jobs").map((o) => o.kind).sort()).toEqual([
    "enum", "function",
    // I and p: the partitioned history tables and their indexes (decision 017).
    "relation I", "relation S", "relation i", "relation p", "relation r",
    // v: the lease and lease_history views over attempt (decision 007).
    "relation v",
  ]);
  expect((await migrationStatus(url, { schema: "acme_jobs" })).history).toBeNull();

  // Prisma Client qualifies its queries with the adapter's schema.
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, options: searchPathOption("acme_jobs") }, { schema: "acme_jobs" }) });
  try {
    expect(await prisma.workflow.count()).toBe(2);
  } finally {
    await prisma.$disconnect();
  }
});

test("a database migrated before the engine had its own schema moves into it, rows, sequences and history kept", async () => {
  const url = await emptyDatabase();
  // The migrations as they were before this one, applied in public, as every database had them.
  const before = await mkdtemp(path.join(tmpdir(), "fenceline-migrations-"));
  cleanups.push(() => rm(before, { recursive: true, force: true }));
  for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n < "20261202100000")) {
    await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
  }
  await deployMigrations(url, { migrationsDir: before, schema: "public" });
  const old = poolFor(url, "public");
  // The code of that time wrote these rows; today's engine writes columns they did not have yet.
  await old.query(`
    WITH w AS (
      INSERT INTO workflow (kind, input, input_digest, requester, tracking_token, steps_remaining)
      VALUES ('old', '{}', 'sha256:old', 'test', 'old-token-0123456789abcdefghijkl', 1) RETURNING id
    ), s AS (
      INSERT INTO step (workflow_id, name, position, adapter, operation, step_class, input, input_digest, state, fencing_term, attempt_budget)
      SELECT id, 'only', 0, 'pure', 'noop', 'pure', '{}', 'sha256:old', 'leased', 1, 5 FROM w RETURNING id
    )
    INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind)
    SELECT id, 1, 1, gen_random_uuid(), 'renewed' FROM s`);
  const counts = "SELECT (SELECT count(*)::int FROM workflow) AS workflows, (SELECT count(*)::int FROM lease_event) AS events, (SELECT max(id)::int FROM lease_event) AS last_event";
  const [kept] = (await old.query(counts)).rows;

  const applied = await deployMigrations(url);
  expect(applied[0]).toBe("20261202100000_engine_in_its_own_schema");
  const objects = await outsider(url, objectsBySchema);
  expect(objects.filter((o) => o.schema === "public")).toEqual([]);

  const pool = poolFor(url, "fenceline");
  expect((await pool.query(counts)).rows).toEqual([kept]);
  expect((await migrationStatus(url)).history).toBeNull();
  expect(await deployMigrations(url)).toEqual([]);
  // The moved tables go on where they were: identity sequences continue, triggers still fire.
  await runTheEngine(pool);
  const [next] = (await pool.query("SELECT min(id)::int AS first_new FROM lease_event WHERE id > $1", [kept.last_event])).rows;
  expect(next.first_new).toBe(kept.last_event + 1);
  await expect(pool.query("UPDATE lease_event SET reason = 'x'")).rejects.toThrow(/append-only/);
});

test("moving the lease onto its attempt keeps every lease and reads the converted events from the attempt", async () => {
  const url = await emptyDatabase();
  const before = await mkdtemp(path.join(tmpdir(), "fenceline-migrations-"));
  cleanups.push(() => rm(before, { recursive: true, force: true }));
  for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n < "20261204200000")) {
    await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
  }
  await deployMigrations(url, { migrationsDir: before });
  const pool = poolFor(url, "fenceline");
  // What the engine wrote before: a step whose first lease ended with its receipt after a
  // renewal, with its attempt, its lease and that lease's three events.
  await pool.query(`
    WITH w AS (
      INSERT INTO workflow (kind, input, input_digest, requester, tracking_token, steps_remaining)
      VALUES ('old', '{}', 'sha256:old', 'test', 'old-token-0123456789abcdefghijkl', 1) RETURNING id
    ), s AS (
      INSERT INTO step (workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest, state, fencing_term, attempt_budget)
      SELECT id, 'only', 0, 'pure', '1', 'noop', 'pure', 'sha256:old', 'completed', 1, 5 FROM w RETURNING id, workflow_id
    ), a AS (
      INSERT INTO attempt (step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, input_digest, checkpoint, deadline_at,
                           created_at, outcome, ended_at)
      SELECT id, workflow_id, 1, 1, '11111111-1111-4111-8111-111111111111', 'execute', 'sha256:old', 'receipt_committed',
             '2026-11-30T10:05:00Z', '2026-11-30T10:00:00Z', 'effect', '2026-11-30T10:00:40Z' FROM s RETURNING id, step_id, workflow_id
    ), l AS (
      INSERT INTO lease (step_id, fencing_term, epoch, workflow_id, attempt_id, owner_session_id, policy_version, leased_at, renewed_at,
                         expires_at, checkpoint_version, ended_at, end_reason)
      SELECT step_id, 1, 1, workflow_id, id, '11111111-1111-4111-8111-111111111111', 3, '2026-11-30T10:00:00Z', '2026-11-30T10:00:20Z',
             '2026-11-30T10:00:50Z', 4, '2026-11-30T10:00:40Z', 'receipt' FROM a
    )
    INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, expires_at, at)
    SELECT step_id, 1, 1, '11111111-1111-4111-8111-111111111111', v.kind::lease_event_kind, v.reason, v.expires_at::timestamptz, v.at::timestamptz
    FROM a, (VALUES ('acquired', NULL, '2026-11-30T10:00:30Z', '2026-11-30T10:00:00Z'),
                    ('renewed', NULL, '2026-11-30T10:00:50Z', '2026-11-30T10:00:20Z'),
                    ('released', 'receipt committed', NULL, '2026-11-30T10:00:40Z')) AS v(kind, reason, expires_at, at)`);
  const leases = "SELECT policy_version, leased_at, renewed_at, expires_at, checkpoint_version, ended_at, end_reason, attempt_id = (SELECT id FROM attempt) AS own_attempt FROM lease";
  const [lease] = (await pool.query(leases)).rows;

  expect(await deployMigrations(url)).toContain("20261204200000_lease_on_the_attempt");
  expect((await pool.query(leases)).rows).toEqual([lease]);
  expect((await pool.query("SELECT kind::text FROM lease_event")).rows).toEqual([{ kind: "renewed" }]);
  const history = (await pool.query("SELECT kind::text, reason, at FROM lease_history ORDER BY at")).rows;
  expect(history).toEqual([
    { kind: "acquired", reason: null, at: new Date("2026-11-30T10:00:00Z") },
    { kind: "renewed", reason: null, at: new Date("2026-11-30T10:00:20Z") },
    { kind: "released", reason: "receipt committed", at: new Date("2026-11-30T10:00:40Z") },
  ]);
  await runTheEngine(pool);
});

test("partitioning attempts and receipts keeps every row and id, and a step's receipt stays its only one", async () => {
  const url = await emptyDatabase();
  const before = await mkdtemp(path.join(tmpdir(), "fenceline-migrations-"));
  cleanups.push(() => rm(before, { recursive: true, force: true }));
  for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n < "20261205100000")) {
    await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
  }
  await deployMigrations(url, { migrationsDir: before });
  const pool = poolFor(url, "fenceline");
  // What the engine wrote before: completed steps with random (v4) ids on their attempts and
  // receipts, chosen so one lands in each legacy range and one in the default partition.
  const ids = ["00000000-0000-4000-8000-000000000001", "02000000-0000-4000-8000-000000000002", "f0000000-0000-4000-8000-000000000003"];
  await pool.query(
    `WITH w AS (
       INSERT INTO workflow (kind, input, input_digest, requester, tracking_token, steps_remaining)
       VALUES ('old', '{}', 'sha256:old', 'test', 'old-token-partitions-0123456789a', 0) RETURNING id
     ), s AS (
       INSERT INTO step (workflow_id, name, position, adapter, adapter_version, operation, step_class, input_digest, state, fencing_term, attempt_budget)
       SELECT w.id, 'step-' || n, n, 'pure', '1', 'noop', 'pure', 'sha256:old', 'completed', 1, 5 FROM w, generate_series(1, 3) n
       RETURNING id, workflow_id, position
     ), a AS (
       INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, input_digest, checkpoint, deadline_at,
                            created_at, outcome, ended_at, policy_version, expires_at, end_reason)
       SELECT ($1::uuid[])[s.position], s.id, s.workflow_id, 1, 1, gen_random_uuid(), 'execute', 'sha256:old', 'receipt_committed',
              now() + interval '5 minutes', now(), 'effect', now(), 1, now() + interval '30 seconds', 'receipt'
       FROM s RETURNING id, step_id, workflow_id
     )
     INSERT INTO receipt (id, workflow_id, step_id, attempt_id, input_digest, verification_method, fencing_term, epoch)
     SELECT a.id, a.workflow_id, a.step_id, a.id, 'sha256:old', 'direct_response', 1, 1 FROM a`,
    [ids],
  );
  const rowsOf = async (table: string) =>
    (await pool.query(`SELECT id::text, tableoid::regclass::text AS partition FROM ${table} ORDER BY id`)).rows;
  expect(await deployMigrations(url)).toContain("20261205100000_attempts_and_receipts_partitioned_by_time");
  for (const table of ["attempt", "receipt"]) {
    expect(await rowsOf(table)).toEqual([
      { id: ids[0], partition: `${table}_legacy_before` },
      { id: ids[1], partition: `${table}_default` },
      { id: ids[2], partition: `${table}_legacy_after` },
    ]);
  }
  expect((await pool.query("SELECT step_id FROM receipt_step")).rows).toHaveLength(3);
  // 0x020000000000 ms is September 2039: creating that month moves the default partition's row
  // into it, receipts too (their permanence allows this one move).
  const month = (await pool.query("SELECT created FROM fl_ensure_safety_partitions('2039-09-10', '2039-09-10') created ORDER BY 1")).rows;
  expect(month).toEqual([{ created: "attempt_2039_09" }, { created: "receipt_2039_09" }]);
  for (const table of ["attempt", "receipt"]) {
    expect((await rowsOf(table))[1]).toEqual({ id: ids[1], partition: `${table}_2039_09` });
  }
  await expect(pool.query("DELETE FROM receipt")).rejects.toThrow(/receipt is permanent/);
  // New ids are time-ordered and land in this month's partition.
  const [fresh] = (await pool.query("SELECT fl_uuid_v7() AS id, 'attempt_' || to_char(now() AT TIME ZONE 'UTC', 'YYYY_MM') AS month")).rows;
  expect(fresh.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
  await runTheEngine(pool);
  const { rows } = await pool.query("SELECT DISTINCT tableoid::regclass::text AS partition FROM attempt WHERE id <> ALL ($1::uuid[])", [ids]);
  expect(rows).toEqual([{ partition: fresh.month }]);
});
