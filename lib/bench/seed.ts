/**
 * A seeded history for the dashboard reads: at scale 1, 250,000 workflows of 4 steps (1M steps),
 * 1.05M attempts (each carrying its lease), 10M lease events (8M written, the rest the attempts'
 * starts and ends), about 1M receipts, 50,000 recovery decisions and
 * 10,000 review cases, spread over the last 30 days (newest last). Every row is written by
 * set-based SQL (`INSERT … SELECT generate_series`); secondary indexes are dropped for the load
 * and rebuilt from their own definitions, then the tables are vacuumed and analysed, as autovacuum
 * would leave them.
 *
 * The database is kept between runs: a marker row names the scale, this generator's version and
 * the migrations' checksum, and a run that finds a matching marker skips generation.
 *
 * Shape per step n (workflow w = n / 4):
 *  - 1 in 20 steps had two attempts: the first lease expired (acquired, 3 renewals, expiry
 *    observed, a make_ready recovery decision), the second concluded (acquired, 3 renewals,
 *    released); the others one attempt (acquired, 8 renewals, released). 10 events per step.
 *  - 1 in 100 steps has a review case; the newest 10% of those are still open (step indeterminate).
 *  - the newest 0.5% of steps are still running (leased) or ready; everything else is completed.
 */
import pg from "pg";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { deployMigrations, migrationsChecksum } from "@/lib/db/migrate.mjs";
import { engineSchema, searchPathOption } from "@/lib/db/schema.mjs";

const SEED_VERSION = 1;
const STEPS_PER_WORKFLOW = 4;
const EVENTS_PER_STEP = 10;
const HISTORY_DAYS = 30;
const ADAPTERS = ["pure", "fenced", "idempotent", "queryable", "opaque"];

export type SeedInfo = {
  readonly url: string;
  readonly steps: number;
  readonly leaseEvents: number;
  readonly generated: boolean;
  readonly generationMs: number;
  /** When the seed was written: its history ends here, whenever the reads run. */
  readonly generatedAt: Date;
};

export const seedDatabaseName = (scale: number): string => `fl_bench_dashboard_${String(scale).replace(/\W/g, "_")}`;

export async function ensureSeeded(scale: number, log: (line: string) => void): Promise<SeedInfo> {
  const steps = Math.max(STEPS_PER_WORKFLOW * 10, Math.round((1_000_000 * scale) / STEPS_PER_WORKFLOW) * STEPS_PER_WORKFLOW);
  const marker = { scale, version: SEED_VERSION, checksum: await migrationsChecksum() };
  const database = seedDatabaseName(scale);
  const { url } = await resolveDatabaseUrl({ database });
  const existing = await generatedAtOf(url, marker);
  if (existing) return { url, steps, leaseEvents: steps * EVENTS_PER_STEP, generated: false, generationMs: 0, generatedAt: existing };

  log(`generating ${steps.toLocaleString("en")} steps and ${(steps * EVENTS_PER_STEP).toLocaleString("en")} lease events in ${database} (kept for later runs)`);
  const startedAt = performance.now();
  await resolveDatabaseUrl({ database, fresh: true });
  await deployMigrations(url);
  const client = new pg.Client({ connectionString: url, options: searchPathOption(engineSchema()) });
  await client.connect();
  let generatedAt: Date;
  try {
    await client.query("SET synchronous_commit = off");
    await client.query("SET maintenance_work_mem = '256MB'");
    await generate(client, steps / STEPS_PER_WORKFLOW, log);
    await client.query("CREATE TABLE bench_seed_marker (scale float8 NOT NULL, version int NOT NULL, checksum text NOT NULL, generated_at timestamptz NOT NULL DEFAULT now())");
    const { rows } = await client.query<{ generated_at: Date }>(
      "INSERT INTO bench_seed_marker (scale, version, checksum) VALUES ($1, $2, $3) RETURNING generated_at",
      [marker.scale, marker.version, marker.checksum],
    );
    generatedAt = rows[0]!.generated_at;
  } finally {
    await client.end();
  }
  return { url, steps, leaseEvents: steps * EVENTS_PER_STEP, generated: true, generationMs: performance.now() - startedAt, generatedAt };
}

/** When the seed matching `marker` was written; null when there is none (or it never finished). */
async function generatedAtOf(url: string, marker: { scale: number; version: number; checksum: string }): Promise<Date | null> {
  const client = new pg.Client({ connectionString: url, options: searchPathOption(engineSchema()) });
  await client.connect();
  try {
    const { rows } = await client.query<{ generated_at: Date }>(
      "SELECT generated_at FROM bench_seed_marker WHERE scale = $1 AND version = $2 AND checksum = $3",
      [marker.scale, marker.version, marker.checksum],
    );
    return rows[0]?.generated_at ?? null;
  } catch (error) {
    if ((error as { code?: string }).code === "42P01") return null; // no marker table: never finished
    throw error;
  } finally {
    await client.end();
  }
}

/** Deterministic, evenly spread UUIDs (md5 of a tag and a number), so inserts are not in key order. */
const uuidOf = (tag: string, expression: string) => `md5('${tag}' || (${expression}))::uuid`;
/**
 * A deterministic id of the moment `at`: uuidOf's, behind `at`'s UUIDv7 prefix, so the row lands
 * in its month's partition of attempt or receipt (partitioned by time-ordered id).
 */
const timedUuidOf = (tag: string, expression: string, at: string) =>
  `encode(overlay(uuid_send(${uuidOf(tag, expression)}) PLACING substring(uuid_send(fl_uuid_v7_floor(${at})) FROM 1 FOR 6) FROM 1 FOR 6), 'hex')::uuid`;

async function generate(client: pg.Client, workflows: number, log: (line: string) => void): Promise<void> {
  const W = workflows;
  const S = workflows * STEPS_PER_WORKFLOW;
  // Position in history of workflow w, newest last: its creation time.
  const createdAt = (w: string) => `(now() - ((${W} - ${w})::float8 / ${W}) * interval '${HISTORY_DAYS} days')`;
  const stepCreated = (n: string) => createdAt(`(${n}) / ${STEPS_PER_WORKFLOW}`);
  // Attempt t of step n begins 20 s after the one before it.
  const attemptIdOf = (n: string, t: string) => timedUuidOf("a", `${n} || '.' || ${t}`, `${stepCreated(n)} + ((${t}) - 1) * interval '20 seconds'`);
  // Newest 0.5% of steps are still in flight; the newest 10% of review cases are still open.
  const inFlight = (n: string) => `((${n}) >= ${Math.floor(S * 0.995)})`;
  const twoAttempts = (n: string) => `((${n}) % 20 = 3)`;
  const reviewed = (n: string) => `((${n}) % 100 = 7)`;
  const openReview = (n: string) => `(${reviewed(n)} AND (${n}) >= ${Math.floor(S * 0.9)})`;
  const adapter = (n: string) => `(ARRAY[${ADAPTERS.map((a) => `'${a}'`).join(",")}])[1 + (${n}) % ${ADAPTERS.length}]`;
  const session = (n: string) => uuidOf("session", `(${n}) % 16`);
  const steps = (alias = "n") => `generate_series(0, ${S - 1}) AS ${alias}`;

  const tables = ["workflow", "step", "attempt", "lease_event", "receipt", "recovery_decision", "review_case"];
  const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const { indexname } of indexes) await client.query(`DROP INDEX ${pg.escapeIdentifier(indexname)}`);
  // The history's months exist before it is written, so no row lands in a default partition.
  await client.query(`SELECT fl_ensure_history_partitions(now() - interval '${HISTORY_DAYS + 1} days', now())`);
  await client.query(`SELECT fl_ensure_safety_partitions(now() - interval '${HISTORY_DAYS + 1} days', now())`);

  const timed = async (label: string, sql: string) => {
    const startedAt = performance.now();
    const result = await client.query(sql);
    log(`  ${label}: ${result.rowCount?.toLocaleString("en") ?? "?"} rows in ${Math.round(performance.now() - startedAt)} ms`);
  };

  await timed(
    "worker sessions",
    `INSERT INTO worker_session (id, host, pid, transport, started_at, last_heartbeat_at)
     SELECT ${session("k")}, 'bench-host-' || k, 1000 + k, 'direct', now() - interval '${HISTORY_DAYS + 1} days', now()
     FROM generate_series(0, 15) AS k`,
  );
  await timed(
    "workflows",
    `INSERT INTO workflow (id, kind, input, input_digest, requester, tracking_token, status, steps_remaining, created_at, updated_at)
     SELECT ${uuidOf("w", "w")}, 'bench', jsonb_build_object('n', w), md5('in' || w), 'bench',
            translate(substr(encode(sha256(('token' || w)::bytea), 'base64'), 1, 32), '+/', '-_'),
            CASE WHEN ${inFlight(`w * ${STEPS_PER_WORKFLOW} + ${STEPS_PER_WORKFLOW - 1}`)} OR ${openReview(`w * ${STEPS_PER_WORKFLOW} + 3`)}
                 THEN 'active' ELSE 'completed' END::workflow_status,
            0, ${createdAt("w")}, ${createdAt("w")} + interval '2 minutes'
     FROM generate_series(0, ${W - 1}) AS w`,
  );
  await timed(
    "steps",
    `INSERT INTO step (id, workflow_id, name, position, adapter, operation, step_class, input_digest, state, fencing_term,
                       attempt_budget, attempts_started, request_identity, created_at, updated_at, completed_at, next_eligible_at)
     SELECT ${uuidOf("s", "n")}, ${uuidOf("w", `n / ${STEPS_PER_WORKFLOW}`)}, 'step-' || (n % ${STEPS_PER_WORKFLOW}), n % ${STEPS_PER_WORKFLOW},
            ${adapter("n")}, 'create', CASE WHEN n % ${ADAPTERS.length} = 0 THEN 'pure' ELSE 'external' END, md5('step' || n),
            CASE WHEN ${openReview("n")} THEN 'indeterminate' WHEN ${inFlight("n")} THEN (CASE WHEN n % 2 = 0 THEN 'leased' ELSE 'ready' END)
                 ELSE 'completed' END::step_state,
            CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END, 5, CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END,
            'fl-' || n, ${stepCreated("n")}, ${stepCreated("n")} + interval '1 minute',
            CASE WHEN ${inFlight("n")} OR ${openReview("n")} THEN NULL ELSE ${stepCreated("n")} + interval '1 minute' END,
            ${stepCreated("n")}
     FROM ${steps()}`,
  );
  // Attempt t (1 or 2) of step n; the last attempt carries the step's outcome.
  const attempts = `${steps()} CROSS JOIN LATERAL generate_series(1, CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END) AS t`;
  const isLast = `(t = CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END)`;
  const finished = `(NOT ${inFlight("n")} AND NOT ${openReview("n")})`;
  const attemptStart = `(${stepCreated("n")} + (t - 1) * interval '20 seconds')`;
  const readyAgain = `(${isLast} AND ${inFlight("n")} AND n % 2 = 1)`;
  // Each attempt carries its lease (decision 007): the first of two expired, the last of a
  // finished step ended with its receipt, one under review expired, one of a step that is ready
  // again was handed back, and one of a leased step is open.
  await timed(
    "attempts and their leases",
    `INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, request_identity, input_digest,
                          adapter_version, checkpoint, deadline_at, created_at, invocation_began_at, response_observed_at,
                          external_reference, observed_result, outcome, outcome_reason, ended_at,
                          policy_version, renewed_at, expires_at, checkpoint_version, end_reason)
     SELECT ${attemptIdOf("n", "t")}, ${uuidOf("s", "n")}, ${uuidOf("w", `n / ${STEPS_PER_WORKFLOW}`)}, t, 1, ${session("n + t")},
            CASE WHEN t = 1 THEN 'execute' ELSE 'retry_same_identity' END::attempt_mode, 'fl-' || n, md5('step' || n), '1',
            CASE WHEN NOT ${isLast} THEN 'invocation_began' WHEN ${finished} THEN 'receipt_committed' WHEN ${openReview("n")} THEN 'invocation_began'
                 ELSE 'created' END::attempt_checkpoint,
            ${attemptStart} + interval '2 minutes', ${attemptStart}, ${attemptStart} + interval '1 second',
            CASE WHEN ${isLast} AND ${finished} THEN ${attemptStart} + interval '2 seconds' END,
            CASE WHEN ${isLast} AND ${finished} THEN 'ext-' || n END,
            CASE WHEN ${isLast} AND ${finished} THEN '{"ok":true}'::jsonb END,
            CASE WHEN NOT ${isLast} THEN 'lease_lost' WHEN ${finished} THEN 'effect' WHEN ${readyAgain} THEN 'released' END::attempt_outcome,
            CASE WHEN NOT ${isLast} THEN 'lease expired' WHEN ${readyAgain} THEN 'no adapter capacity' END,
            CASE WHEN ${finished} AND ${isLast} THEN ${attemptStart} + interval '15 seconds'
                 WHEN NOT ${isLast} OR ${openReview("n")} OR ${readyAgain} THEN ${attemptStart} + interval '19 seconds' END,
            1, ${attemptStart} + interval '9 seconds',
            CASE WHEN ${isLast} AND ${inFlight("n")} AND n % 2 = 0 THEN now() + interval '10 seconds' ELSE ${attemptStart} + interval '19 seconds' END,
            CASE WHEN ${isLast} AND ${finished} THEN 5 ELSE 3 END,
            CASE WHEN NOT ${isLast} OR ${openReview("n")} THEN 'expired' WHEN ${finished} THEN 'receipt' WHEN ${readyAgain} THEN 'released'
                 END::lease_end_reason
     FROM ${attempts}`,
  );
  // Ten events per step: see the module header. Event e (0-9) of step n; `acquired` and
  // `released` are not written but read from the attempt, as the engine does.
  await timed(
    "lease events",
    `INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, reason, expires_at, at)
     SELECT ${uuidOf("s", "n")}, v.term, 1, ${session("n + v.term")}, v.kind::lease_event_kind, v.reason,
            ${stepCreated("n")} + ((v.term - 1) * 20 + v.offset_s + 10) * interval '1 second',
            ${stepCreated("n")} + ((v.term - 1) * 20 + v.offset_s) * interval '1 second'
     FROM ${steps()} CROSS JOIN LATERAL (
       SELECT CASE WHEN ${twoAttempts("n")} THEN (e / 5) + 1 ELSE 1 END AS term,
              CASE WHEN e = 0 OR (${twoAttempts("n")} AND e = 5) THEN 'acquired'
                   WHEN ${twoAttempts("n")} AND e = 4 THEN 'expiry_observed'
                   WHEN e = 9 THEN 'released'
                   ELSE 'renewed' END AS kind,
              CASE WHEN ${twoAttempts("n")} AND e = 4 THEN 'expired' WHEN e = 9 THEN 'receipt committed' END AS reason,
              CASE WHEN ${twoAttempts("n")} THEN (e % 5) * 3 ELSE e * 1.5 END::float8 AS offset_s
       FROM generate_series(0, ${EVENTS_PER_STEP - 1}) AS e
     ) v
     WHERE v.kind NOT IN ('acquired', 'released')`,
  );
  await timed(
    "receipts",
    `INSERT INTO receipt (id, workflow_id, step_id, attempt_id, input_digest, adapter_version, request_identity, external_reference,
                          observed_result, verification_method, fencing_term, epoch, created_at)
     SELECT ${timedUuidOf("r", "n", `${stepCreated("n")} + interval '1 minute'`)}, ${uuidOf("w", `n / ${STEPS_PER_WORKFLOW}`)}, ${uuidOf("s", "n")}, ${attemptIdOf("n", `CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END`)},
            md5('step' || n), '1', 'fl-' || n, 'ext-' || n, '{"ok":true}'::jsonb, 'direct_response',
            CASE WHEN ${twoAttempts("n")} THEN 2 ELSE 1 END, 1, ${stepCreated("n")} + interval '1 minute'
     FROM ${steps()} WHERE ${finished}`,
  );
  // One receipt per step, as the receipt statement records it (receipt_step's primary key).
  await timed("receipt guards", "INSERT INTO receipt_step (step_id, receipt_id) SELECT step_id, id FROM receipt");
  await timed(
    "recovery decisions",
    `INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence, observed_expires_at, decided_at, decided_by)
     SELECT ${uuidOf("s", "n")}, ${attemptIdOf("n", "1")}, 1, 1, 'lease_expired', 'make_ready',
            '{"checkpoint":"created"}'::jsonb, ${stepCreated("n")} + interval '19 seconds', ${stepCreated("n")} + interval '20 seconds', 'bench'
     FROM ${steps()} WHERE ${twoAttempts("n")}`,
  );
  await timed(
    "review cases",
    `INSERT INTO review_case (step_id, workflow_id, reason, evidence, status, assignee, review_by, opened_at, resolution, resolved_by, resolved_at)
     SELECT ${uuidOf("s", "n")}, ${uuidOf("w", `n / ${STEPS_PER_WORKFLOW}`)}, 'outcome unknown: destination is opaque', '{}'::jsonb,
            CASE WHEN ${openReview("n")} THEN 'open' ELSE 'resolved' END::review_status, NULL,
            ${stepCreated("n")} + interval '1 day', ${stepCreated("n")} + interval '30 seconds',
            CASE WHEN ${openReview("n")} THEN NULL ELSE 'confirm_delivered' END::review_resolution,
            CASE WHEN ${openReview("n")} THEN NULL ELSE 'support@bench' END,
            CASE WHEN ${openReview("n")} THEN NULL ELSE ${stepCreated("n")} + interval '1 minute' END
     FROM ${steps()} WHERE ${reviewed("n")}`,
  );
  await timed(
    "workflow steps_remaining",
    `UPDATE workflow w SET steps_remaining = x.remaining
     FROM (SELECT workflow_id, count(*) FILTER (WHERE completed_at IS NULL)::int AS remaining FROM step GROUP BY workflow_id) x
     WHERE w.id = x.workflow_id AND x.remaining > 0`,
  );
  for (const { indexname, indexdef } of indexes) {
    const startedAt = performance.now();
    // A partitioned table's index reads `ON ONLY`, which would build it on no partition.
    await client.query(indexdef.replace(" ON ONLY ", " ON "));
    log(`  index ${indexname}: ${Math.round(performance.now() - startedAt)} ms`);
  }
  const startedAt = performance.now();
  await client.query("VACUUM (ANALYZE)");
  log(`  vacuum analyze: ${Math.round(performance.now() - startedAt)} ms`);
}

