/**
 * Requests that wait, at scale (issue 28's "Scale"): what sleeping requests cost, how late timers
 * fire, and how soon an event wakes its wait. Fenceline's direct transport, two worker processes
 * of concurrency 50 (the throughput part's settings), each serving the `bench-timer` and
 * `bench-event` workflows (a wait, then a no-op step; lib/bench/workflows.ts). All times are on
 * the database clock.
 *
 * - Asleep: 100,000 requests whose timers are due in a month, against a database with none; the
 *   same workers run over each for a fixed window, alternating, and the whole server's CPU (the
 *   postmaster and all its children, from /proc) is read over the window. Then the claim of 50
 *   among 200 ready steps, `EXPLAIN (ANALYZE, BUFFERS)`, in both: its plan and buffers.
 * - Timers: 10,000 due within the same second, and 3,000 due 100 a second; lateness is the
 *   timer's firing (its `settled_at`, the keeper's transaction) minus its due time.
 * - Events: 10,000 waits, then 10,000 events sent at 1,000 a second through `sendEvent` from the
 *   harness (32 connections; a send starts on schedule, or as soon as a connection is free when
 *   all 32 are busy); event-to-claim is the claim of the step after the wait (its attempt's creation) minus
 *   the event's acceptance (`received_at`).
 *
 * Seeding: requests are created with the engine's createWorkflows, and their wait steps claimed
 * with its claim (a session of the harness, as a worker's); the first few are parked through the
 * engine's own parkStep, the rest by one statement per batch that writes what parkStep and the
 * room's arming write (the attempt ends as `waiting`, the step waits, the room's row), and the
 * rows of both are compared before anything is measured. Workers start after the seeding.
 */
import type { Pool } from "pg";
import { registeredWorkflow, registrationOf } from "@/lib/definitions/registration";
import type { WorkflowDefinition } from "@/lib/definitions/workflow";
import { createPool } from "@/lib/db/pool";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { claimSteps } from "@/lib/engine/lease";
import { claimReadySteps } from "@/lib/engine/sql/lease";
import { registerWorkerSession, stopSession } from "@/lib/engine/session";
import { holdsAuthority } from "@/lib/engine/sql/authority";
import type { ClaimedStep, WorkflowVersion } from "@/lib/engine/types";
import { parkStep } from "@/lib/engine/waits";
import { createWorkflows } from "@/lib/engine/workflow";
import { sendEvent } from "@/lib/events/send";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { waitRooms } from "@/lib/waits/rooms";
import { FENCELINE_CONCURRENCY, FENCELINE_PROCESSES, freshDatabase } from "./engines";
import { parentPid, serverCpuMs, spawnChild, type BenchChild } from "./processes";
import { percentile, round, sleep } from "./stats";
import { BENCH_EVENT, benchDraft, benchEvent, benchNoop, benchTimer } from "./workflows";

export type WaitsShape = {
  readonly asleep: number;
  /** Length of each CPU window, and the pause after the workers start before it opens. */
  readonly windowMs: number;
  readonly warmupMs: number;
  readonly burst: number;
  readonly steadyPerS: number;
  readonly steadySeconds: number;
  readonly events: number;
  readonly eventsPerS: number;
};

export const WAITS: WaitsShape = { asleep: 100_000, windowMs: 30_000, warmupMs: 5_000, burst: 10_000, steadyPerS: 100, steadySeconds: 30, events: 10_000, eventsPerS: 1_000 };

const BATCH = 1_000;
/** Wait steps parked through the engine's parkStep itself: the rows the bulk statement must match. */
const SAMPLE = 20;
const PARK_REASON = "waiting: timer";
const EVENT_PARK_REASON = "waiting: event";
const CLAIM_LIMIT = 50;
const CLAIM_READY = 200;
const CLAIM_SAMPLES = 15;
/**
 * Time from the seeding's start to the first due timer, so that seeding and the workers' start fit
 * well inside: seeding took up to 4 ms a request on this machine under load, a worker's start 10 s.
 */
const timerLeadMs = (count: number) => 15_000 + count * 6;
const SEND_CONNECTIONS = 32;
const TIMEOUT_MS = 5 * 60_000;

type Log = (line: string) => void;
type Database = { url: string; pool: Pool; drop: () => Promise<void> };

const WORKFLOWS: readonly WorkflowDefinition[] = [benchNoop, benchTimer, benchEvent];
const SERVED: readonly WorkflowVersion[] = WORKFLOWS.map((workflow) => ({ kind: workflow.kind, version: workflow.version }));

async function database(name: string): Promise<Database> {
  const db = await freshDatabase(name);
  await deployMigrations(db.url);
  return db;
}

function startWorkers(db: Database): Promise<BenchChild[]> {
  const children = Array.from({ length: FENCELINE_PROCESSES }, () =>
    spawnChild({ role: "fenceline-worker", transport: "direct", databaseUrl: db.url, concurrency: FENCELINE_CONCURRENCY, waits: true }),
  );
  return Promise.all(children.map((child) => child.ready)).then(() => children);
}

async function stopAll(children: readonly BenchChild[]): Promise<void> {
  for (const child of children) await child.stop();
}

async function dbNow(pool: Pool): Promise<Date> {
  return (await pool.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;
}

const stats = (values: readonly number[]) => ({
  p50: round(percentile(values, 50), 1),
  p99: round(percentile(values, 99), 1),
  max: round(Math.max(...values), 1),
});
export type Distribution = ReturnType<typeof stats>;

// ---- seeding -------------------------------------------------------------------------------

/**
 * What parkStep writes for a batch, before the room arms its waits: the arming attempts end as
 * `waiting` under the authority guard and their steps wait. `request` unnests the batch: $2 steps,
 * $3 terms and the room's own columns (session $1, reason $4).
 */
const parkedSteps = (request: string) => `
WITH request AS (${request}),
authority AS (
  UPDATE attempt l
  SET ended_at = now(), end_reason = 'released', outcome = 'waiting', outcome_reason = $4
  FROM request r
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "r.step_id", term: "r.fencing_term" })}
    AND l.checkpoint IN ('created', 'identity_persisted')
  RETURNING l.step_id
),
parked AS (
  UPDATE step s SET state = 'waiting', state_reason = $4, updated_at = now()
  FROM authority a WHERE s.id = a.step_id AND s.state = 'leased'
  RETURNING s.id, s.workflow_id
)`;

/** Parked steps and the timer room's arming: each gets its timer ($5 what each asked for, as the worker sends it). */
const parkTimers = `${parkedSteps("SELECT * FROM unnest($2::uuid[], $3::bigint[], $5::jsonb[]) AS r(step_id, fencing_term, requested)")}
INSERT INTO timer (step_id, workflow_id, due_at, requested)
SELECT p.id, p.workflow_id, (r.requested->>'at')::timestamptz, r.requested
FROM parked p JOIN request r ON r.step_id = p.id
RETURNING step_id`;

/** The same for event waits: each waits for ($5 name, $6 key), with no timeout, failing the request if one were reached. */
const parkEventWaits = `${parkedSteps("SELECT * FROM unnest($2::uuid[], $3::bigint[], $5::text[], $6::text[]) AS r(step_id, fencing_term, name, correlation_key)")}
INSERT INTO event_wait (step_id, workflow_id, name, correlation_key, timeout_at, on_timeout, url_token)
SELECT p.id, p.workflow_id, r.name, r.correlation_key, NULL, 'fail', NULL
FROM parked p JOIN request r ON r.step_id = p.id
RETURNING step_id`;

type Seeding = {
  readonly workflow: WorkflowDefinition;
  /** Requests `from` (default 0) to `count` − 1 are seeded. */
  readonly from?: number;
  readonly count: number;
  readonly input: (n: number) => unknown;
  /** What the wait step of request `n` asks its room for, as the worker would send it. */
  readonly request: (n: number) => Record<string, unknown>;
};

/** Registers the bench's definitions under a session of the harness (as a worker does); returns the session. */
async function register(pool: Pool): Promise<string> {
  return (await registerWorkerSession(pool, { transport: "direct", registration: registrationOf(WORKFLOWS) })).sessionId;
}

/** `count` requests of `workflow`, their wait steps parked and armed; returns the ms it took. */
async function seed(pool: Pool, seeding: Seeding, log: Log): Promise<number> {
  const started = performance.now();
  const session = await register(pool);
  const registered = registeredWorkflow(seeding.workflow);
  const timer = seeding.workflow.kind === benchTimer.kind;
  const served = SERVED.filter((version) => version.kind === seeding.workflow.kind);
  const sampled: string[] = [];
  const bulk: string[] = [];
  const from = seeding.from ?? 0;
  for (let offset = from; offset < seeding.count; offset += BATCH) {
    const size = Math.min(BATCH, seeding.count - offset);
    const created = await createWorkflows(
      pool,
      Array.from({ length: size }, (_, i) => instantiateWorkflow(registered, seeding.input(offset + i), { requester: "bench", idempotencyKey: null, deadlineAt: null })),
    );
    const nOf = new Map(created.map((request, i) => [request.workflowId, offset + i]));
    const claimed: ClaimedStep[] = await claimSteps(pool, session, served, size);
    if (claimed.length !== size) throw new Error(`seeding ${seeding.workflow.kind}: claimed ${claimed.length} of ${size} wait steps`);
    const request = (step: ClaimedStep) => seeding.request(nOf.get(step.workflowId)!);
    const sample = offset === from ? claimed.slice(0, SAMPLE) : [];
    for (const step of sample) {
      await parkStep(pool, waitRooms, { stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId: session }, { room: timer ? "timer" : "event", request: request(step) }, timer ? PARK_REASON : EVENT_PARK_REASON);
      sampled.push(step.stepId);
    }
    const rest = claimed.slice(sample.length);
    const terms = rest.map((step) => step.fencingTerm.toString());
    const ids = rest.map((step) => step.stepId);
    const { rowCount } = timer
      ? await pool.query(parkTimers, [session, ids, terms, PARK_REASON, rest.map((step) => JSON.stringify(request(step)))])
      : await pool.query(parkEventWaits, [session, ids, terms, EVENT_PARK_REASON, rest.map((step) => request(step).name), rest.map((step) => request(step).key)]);
    if (rowCount !== rest.length) throw new Error(`seeding ${seeding.workflow.kind}: parked ${rowCount} of ${rest.length}`);
    bulk.push(...ids);
    if ((offset + size) % 20_000 === 0) log(`  seeded ${offset + size} of ${seeding.count}`);
  }
  await stopSession(pool, session, "bench seeding done");
  await sameRows(pool, timer, sampled, bulk);
  return performance.now() - started;
}

/**
 * The bulk statement must leave what the engine's own parking leaves: every column that is not an
 * id or a time (and how the times relate) is compared between the sample and the rest.
 */
async function sameRows(pool: Pool, timer: boolean, sampled: readonly string[], bulk: readonly string[]): Promise<void> {
  const room = timer
    ? `(SELECT jsonb_build_object('state', t.state, 'requested', (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(t.requested) k), 'dueIsAsked', t.due_at = (t.requested->>'at')::timestamptz,
                                  'armedAtPark', t.armed_at = a.ended_at, 'settled', t.settled_at IS NOT NULL, 'byStep', t.workflow_id = s.workflow_id)
        FROM timer t WHERE t.step_id = s.id)`
    : `(SELECT jsonb_build_object('state', e.state, 'name', e.name, 'timeout', e.timeout_at, 'onTimeout', e.on_timeout, 'url', e.url_token IS NOT NULL,
                                  'armedAtPark', e.armed_at = a.ended_at, 'event', e.event_id, 'settled', e.settled_at IS NOT NULL, 'byStep', e.workflow_id = s.workflow_id)
        FROM event_wait e WHERE e.step_id = s.id)`;
  const signatures = async (ids: readonly string[]) => {
    const { rows } = await pool.query<{ signature: string }>(
      `SELECT DISTINCT jsonb_build_object(
         'step', jsonb_build_object('state', s.state, 'reason', s.state_reason, 'term', s.fencing_term, 'started', s.attempts_started, 'updatedAtPark', s.updated_at = a.ended_at),
         'attempt', to_jsonb(a) - ARRAY['id', 'step_id', 'workflow_id', 'owner_session_id', 'input_digest', 'created_at', 'ended_at', 'deadline_at', 'expires_at', 'renewed_at'],
         'attempts', (SELECT count(*) FROM attempt x WHERE x.step_id = s.id),
         'dependants', (SELECT jsonb_agg(d.state) FROM step_dependency sd JOIN step d ON d.id = sd.step_id WHERE sd.depends_on_step_id = s.id),
         'room', ${room})::text AS signature
       FROM step s JOIN attempt a ON a.step_id = s.id WHERE s.id = ANY($1::uuid[])`,
      [ids],
    );
    return rows.map((row) => row.signature).sort();
  };
  const [engine, seeded] = [await signatures(sampled), await signatures(bulk)];
  if (engine.length !== 1 || JSON.stringify(engine) !== JSON.stringify(seeded)) {
    throw new Error(`seeding: the bulk-parked rows differ from the engine's parkStep: engine ${engine.join(" | ")}; bulk ${seeded.join(" | ")}`);
  }
}

// ---- asleep: CPU and the claim -------------------------------------------------------------

export type CpuWindow = { readonly database: "none asleep" | "asleep"; readonly cpuMsPerS: number };
export type ClaimExplained = {
  readonly asleep: number;
  /** The plan of most samples, and how many of the samples had it. */
  readonly plan: string;
  readonly samplesWithPlan: number;
  readonly buffers: number;
  readonly executionMs: number;
};
export type AsleepResult = {
  readonly requests: number;
  readonly seedMs: number;
  readonly windowMs: number;
  readonly windows: readonly CpuWindow[];
  /** Medians over the windows of each database, ms of server CPU per second. */
  readonly idleCpuMsPerS: number;
  readonly asleepCpuMsPerS: number;
  /** asleep / idle − 1, in percent. */
  readonly cpuDifferencePercent: number;
  /**
   * The claim with none asleep, a tenth of them, and all of them. With none, the tables hold 200
   * requests and the planner may well scan them whole: the plan to compare is a tenth's against all.
   */
  readonly claim: {
    readonly none: ClaimExplained;
    readonly tenth: ClaimExplained;
    readonly all: ClaimExplained;
    /**
     * The control: the same database once every sleeping request is cancelled (the rows stay, none
     * sleeps). What the claim pays beside sleeping requests that it also pays here is the size of
     * the tables (one more level in the indexes it descends), not the sleeping.
     */
    readonly allEnded: ClaimExplained;
    readonly samePlan: boolean;
  };
  /** Timers still waiting after the windows (none fired: they are due in a month). */
  readonly stillAsleep: number;
};

async function postmasterOf(pool: Pool): Promise<number> {
  const backend = (await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const postmaster = parentPid(backend);
  if (postmaster === null) throw new Error("the waits part reads PostgreSQL's CPU from /proc: it needs PostgreSQL on this host (the embedded one, or a local DATABASE_URL)");
  return postmaster;
}

async function cpuWindow(db: Database, postmaster: number, shape: WaitsShape): Promise<number> {
  const children = await startWorkers(db);
  try {
    await sleep(shape.warmupMs);
    const cpuBefore = serverCpuMs(postmaster);
    const started = performance.now();
    await sleep(shape.windowMs);
    const cpuMs = serverCpuMs(postmaster) - cpuBefore;
    return round((cpuMs / (performance.now() - started)) * 1000, 1);
  } finally {
    await stopAll(children);
  }
}

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] } & Record<string, unknown>;

const shapeOf = (node: PlanNode): string =>
  `${node["Node Type"]}${node["Index Name"] ? ` using ${node["Index Name"]}` : node["Relation Name"] ? ` on ${node["Relation Name"]}` : ""}` +
  (node.Plans?.length ? `(${node.Plans.map(shapeOf).join(", ")})` : "");

/** Ready no-op steps for the explained claim: they stay ready (each claim is rolled back), and the workers run them when they start. */
async function addReady(pool: Pool): Promise<void> {
  await createWorkflows(pool, Array.from({ length: CLAIM_READY }, (_, n) => benchDraft({ n })));
}

/** The claim of CLAIM_LIMIT among the CLAIM_READY ready no-op steps, explained with its buffers and rolled back; medians. */
async function explainClaim(pool: Pool, asleep: number): Promise<ClaimExplained> {
  await pool.query("VACUUM ANALYZE");
  const session = await register(pool);
  const statement = claimReadySteps(CLAIM_LIMIT);
  const samples: { plan: string; buffers: number; ms: number }[] = [];
  const client = await pool.connect();
  try {
    for (let i = 0; i < CLAIM_SAMPLES; i += 1) {
      await client.query("BEGIN");
      const { rows } = await client.query<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, [
        session,
        SERVED.map((version) => version.kind),
        SERVED.map((version) => version.version),
      ]);
      await client.query("ROLLBACK");
      const explained = rows[0]!["QUERY PLAN"][0]!;
      const plan = explained.Plan;
      if (plan["Actual Rows"] !== CLAIM_LIMIT) throw new Error(`the explained claim took ${String(plan["Actual Rows"])} steps, not ${CLAIM_LIMIT}`);
      const buffers = ["Shared Hit Blocks", "Shared Read Blocks", "Shared Dirtied Blocks", "Shared Written Blocks"].reduce((sum, key) => sum + Number(plan[key] ?? 0), 0);
      samples.push({ plan: shapeOf(plan), buffers, ms: explained["Execution Time"] });
    }
  } finally {
    client.release();
  }
  await stopSession(pool, session, "bench claim explained");
  const counts = new Map<string, number>();
  for (const sample of samples) counts.set(sample.plan, (counts.get(sample.plan) ?? 0) + 1);
  const [plan, samplesWithPlan] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  return {
    asleep,
    plan,
    samplesWithPlan,
    buffers: percentile(samples.map((sample) => sample.buffers), 50),
    executionMs: round(percentile(samples.map((sample) => sample.ms), 50), 2),
  };
}

export async function measureAsleep(rounds: number, log: Log, shape: WaitsShape = WAITS): Promise<AsleepResult> {
  const idle = await database("waits_idle");
  const asleep = await database("waits_asleep");
  try {
    await stopSession(idle.pool, await register(idle.pool), "bench: definitions registered");
    const now = await dbNow(asleep.pool);
    // Spread over a day, a month from now: nothing fires during the run.
    const dueAt = (n: number) => new Date(now.getTime() + 30 * 86_400_000 + Math.floor((n * 86_400_000) / shape.asleep)).toISOString();
    const seeding = { workflow: benchTimer, input: (n: number) => ({ dueAt: dueAt(n) }), request: (n: number) => ({ at: dueAt(n) }) };
    const tenth = Math.round(shape.asleep / 10);
    log(`waits, asleep: seeding ${shape.asleep} requests whose timers are due in a month (the claim explained at none, ${tenth} and ${shape.asleep})`);
    await addReady(idle.pool);
    await addReady(asleep.pool);
    const claimNone = await explainClaim(idle.pool, 0);
    let seedMs = await seed(asleep.pool, { ...seeding, count: tenth }, log);
    const claimTenth = await explainClaim(asleep.pool, tenth);
    seedMs += await seed(asleep.pool, { ...seeding, from: tenth, count: shape.asleep }, log);
    const claimAll = await explainClaim(asleep.pool, shape.asleep);
    log(`  seeded in ${round(seedMs / 1000, 1)} s`);
    log(
      `  claim of ${CLAIM_LIMIT} among ${CLAIM_READY} ready: ${claimNone.buffers} buffers with none asleep, ${claimTenth.buffers} beside ${tenth}, ${claimAll.buffers} beside ${shape.asleep}; ` +
        `same plan at ${tenth} and ${shape.asleep}: ${claimTenth.plan === claimAll.plan}`,
    );
    // Tables as autovacuum leaves them after a burst of writes, and dirty pages written, in both.
    for (const db of [idle, asleep]) await db.pool.query("VACUUM ANALYZE");
    await asleep.pool.query("CHECKPOINT");
    const postmaster = await postmasterOf(asleep.pool);

    const windows: CpuWindow[] = [];
    for (let r = 0; r < rounds; r += 1) {
      const order = r % 2 === 0 ? (["none asleep", "asleep"] as const) : (["asleep", "none asleep"] as const);
      for (const which of order) {
        const cpuMsPerS = await cpuWindow(which === "asleep" ? asleep : idle, postmaster, shape);
        log(`  round ${r + 1}/${rounds}, ${which}: PostgreSQL ${cpuMsPerS} ms CPU per second over ${shape.windowMs / 1000} s, ${FENCELINE_PROCESSES} workers running`);
        windows.push({ database: which, cpuMsPerS });
      }
    }
    const median = (which: CpuWindow["database"]) => round(percentile(windows.filter((w) => w.database === which).map((w) => w.cpuMsPerS), 50), 1);
    const idleCpu = median("none asleep");
    const asleepCpu = median("asleep");
    const stillAsleep = Number((await asleep.pool.query<{ n: string }>("SELECT count(*) AS n FROM timer WHERE state = 'waiting'")).rows[0]!.n);
    if (stillAsleep !== shape.asleep) throw new Error(`waits, asleep: ${stillAsleep} of ${shape.asleep} timers still wait; none was due`);

    // The control: the sleeping requests end (cancelled, in bulk; the rooms' triggers end their
    // timers), their rows stay.
    await asleep.pool.query(
      `WITH ended AS (
         UPDATE workflow SET status = 'cancelled', status_reason = 'bench: the control', updated_at = now() WHERE kind = $1 AND status = 'active' RETURNING id
       )
       UPDATE step s SET state = 'cancelled', state_reason = 'bench: the control', completed_at = now(), updated_at = now()
       FROM ended e WHERE s.workflow_id = e.id AND s.state IN ('waiting', 'blocked')`,
      [benchTimer.kind],
    );
    // The workers ran the first ready steps during the windows: as many again.
    await addReady(asleep.pool);
    const claimEnded = await explainClaim(asleep.pool, 0);
    log(`  control: ${claimEnded.buffers} buffers once those ${shape.asleep} requests are cancelled (their rows kept); same plan as asleep: ${claimEnded.plan === claimAll.plan}`);
    return {
      requests: shape.asleep,
      seedMs: round(seedMs, 0),
      windowMs: shape.windowMs,
      windows,
      idleCpuMsPerS: idleCpu,
      asleepCpuMsPerS: asleepCpu,
      cpuDifferencePercent: round((asleepCpu / idleCpu - 1) * 100, 1),
      claim: { none: claimNone, tenth: claimTenth, all: claimAll, allEnded: claimEnded, samePlan: claimTenth.plan === claimAll.plan },
      stillAsleep,
    };
  } finally {
    await idle.drop();
    await asleep.drop();
  }
}

// ---- timers: lateness ------------------------------------------------------------------------

export type TimersResult = {
  readonly timers: number;
  /** Over how long their due times spread. */
  readonly spreadMs: number;
  /** Fired minus due. */
  readonly latenessMs: Distribution;
  /** The claim of the step after each timer minus its due time: when work resumes. */
  readonly dueToNextClaimMs: Distribution;
};

/** `count` timers due evenly over `spreadMs`, from a whole second timerLeadMs after the seeding starts. */
export async function measureTimers(count: number, spreadMs: number, log: Log): Promise<TimersResult> {
  const db = await database("waits_timers");
  try {
    const now = await dbNow(db.pool);
    const first = Math.ceil((now.getTime() + timerLeadMs(count)) / 1000) * 1000;
    const dueAt = (n: number) => new Date(first + Math.floor((n * spreadMs) / count)).toISOString();
    log(`waits, timers: ${count} due over ${spreadMs} ms from ${new Date(first).toISOString()}`);
    await seed(db.pool, { workflow: benchTimer, count, input: (n) => ({ dueAt: dueAt(n) }), request: (n) => ({ at: dueAt(n) }) }, log);
    await db.pool.query("VACUUM ANALYZE");
    const children = await startWorkers(db);
    try {
      const leftMs = first - (await dbNow(db.pool)).getTime();
      if (leftMs < 2_000) throw new Error(`waits, timers: seeding and starting the workers left ${leftMs} ms before the first timer; raise timerLeadMs`);
      const deadline = performance.now() + leftMs + spreadMs + TIMEOUT_MS;
      // Done when every request's last step has its receipt.
      while ((await receiptsOf(db.pool, "after")) < count) {
        if (performance.now() > deadline) throw new Error(`waits, timers: ${await receiptsOf(db.pool, "after")} of ${count} requests done in time`);
        await sleep(250);
      }
    } finally {
      await stopAll(children);
    }
    // The first claim of the step after the timer: a later one is a retry (a lease lost under load).
    const { rows } = await db.pool.query<{ lateness_ms: number; next_claim_ms: number }>(
      `SELECT extract(epoch FROM t.settled_at - t.due_at) * 1000 AS lateness_ms,
              extract(epoch FROM (SELECT min(a.created_at) FROM attempt a WHERE a.step_id = s.id) - t.due_at) * 1000 AS next_claim_ms
       FROM timer t JOIN step s ON s.workflow_id = t.workflow_id AND s.name = 'after'
       WHERE t.state = 'fired'`,
    );
    if (rows.length !== count) throw new Error(`waits, timers: ${rows.length} of ${count} fired with a claim after each`);
    const lateness = rows.map((row) => Number(row.lateness_ms));
    if (Math.min(...lateness) < 0) throw new Error("waits, timers: a timer fired before its time");
    const result = { timers: count, spreadMs, latenessMs: stats(lateness), dueToNextClaimMs: stats(rows.map((row) => Number(row.next_claim_ms))) };
    log(`  lateness p50 ${result.latenessMs.p50} ms, p99 ${result.latenessMs.p99}, max ${result.latenessMs.max}; due to next claim p99 ${result.dueToNextClaimMs.p99} ms`);
    return result;
  } finally {
    await db.drop();
  }
}

async function receiptsOf(pool: Pool, step: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM receipt r JOIN step s ON s.id = r.step_id WHERE s.name = $1", [step]);
  return Number(rows[0]!.n);
}

// ---- events: event to claim ----------------------------------------------------------------

export type EventsResult = {
  readonly events: number;
  readonly targetPerS: number;
  /** Events accepted per second, first to last acceptance. */
  readonly acceptedPerS: number;
  /** The send call as the harness saw it. */
  readonly sendMs: Distribution;
  readonly eventToClaimMs: Distribution;
};

export async function measureEvents(count: number, perS: number, log: Log): Promise<EventsResult> {
  const db = await database("waits_events");
  const key = (n: number) => `order-${n}`;
  try {
    log(`waits, events: ${count} waits, then ${count} events at ${perS}/s`);
    await seed(db.pool, { workflow: benchEvent, count, input: (n) => ({ key: key(n) }), request: (n) => ({ name: BENCH_EVENT, key: key(n), timeoutMs: null, onTimeout: "fail", url: false }) }, log);
    await db.pool.query("VACUUM ANALYZE");
    const children = await startWorkers(db);
    const senders = createPool(db.url, { applicationName: "bench-events", max: SEND_CONNECTIONS });
    const sendMs: number[] = [];
    try {
      await sleep(2_000);
      const started = performance.now();
      const sends = new Set<Promise<void>>();
      let failed: unknown = null;
      for (let n = 0; n < count; n += 1) {
        const wait = started + (n * 1000) / perS - performance.now();
        if (wait > 1) await sleep(wait);
        // At most one send per connection in flight: when the server falls behind the schedule, the
        // sends go out as fast as it takes them (the accepted rate says so) rather than queueing.
        if (sends.size >= SEND_CONNECTIONS) await Promise.race(sends);
        const sentAt = performance.now();
        const send: Promise<void> = sendEvent(senders, { name: BENCH_EVENT, key: key(n), payload: { n }, sender: "app:bench", idempotencyKey: `bench-${n}` }).then(
          (sent) => {
            if (!sent.consumedBy) failed ??= new Error(`event ${n} woke no wait`);
            sendMs.push(performance.now() - sentAt);
            sends.delete(send);
          },
          (error: unknown) => {
            failed ??= error;
            sends.delete(send);
          },
        );
        sends.add(send);
      }
      await Promise.all([...sends]);
      if (failed) throw failed;
      const deadline = performance.now() + TIMEOUT_MS;
      while ((await receiptsOf(db.pool, "after")) < count) {
        if (performance.now() > deadline) throw new Error(`waits, events: ${await receiptsOf(db.pool, "after")} of ${count} requests done in time`);
        await sleep(250);
      }
    } finally {
      await senders.end();
      await stopAll(children);
    }
    const { rows } = await db.pool.query<{ to_claim_ms: number; received_at: Date }>(
      // The first claim of the step after the wait: a later one is a retry (a lease lost under load).
      `SELECT extract(epoch FROM (SELECT min(a.created_at) FROM attempt a WHERE a.step_id = s.id) - e.received_at) * 1000 AS to_claim_ms, e.received_at
       FROM event e JOIN step w ON w.id = e.consumed_by_step_id
       JOIN step s ON s.workflow_id = w.workflow_id AND s.name = 'after'`,
    );
    if (rows.length !== count) throw new Error(`waits, events: ${rows.length} of ${count} events woke a wait whose next step was claimed`);
    const received = rows.map((row) => row.received_at.getTime());
    const spanMs = Math.max(...received) - Math.min(...received);
    const result = {
      events: count,
      targetPerS: perS,
      acceptedPerS: round(((count - 1) / spanMs) * 1000, 0),
      sendMs: stats(sendMs),
      eventToClaimMs: stats(rows.map((row) => Number(row.to_claim_ms))),
    };
    log(`  accepted ${result.acceptedPerS}/s; event to claim p50 ${result.eventToClaimMs.p50} ms, p99 ${result.eventToClaimMs.p99}, max ${result.eventToClaimMs.max}; send p99 ${result.sendMs.p99} ms`);
    return result;
  } finally {
    await db.drop();
  }
}

// ---- the part --------------------------------------------------------------------------------

/** The waits part's sections: each can be run alone (`--waits-sections`). */
export const WAITS_SECTIONS = ["asleep", "burst", "steady", "events"] as const;
export type WaitsSection = (typeof WAITS_SECTIONS)[number];

export type WaitsResult = {
  readonly shape: WaitsShape;
  readonly asleep: AsleepResult | null;
  readonly burst: TimersResult | null;
  readonly steady: TimersResult | null;
  readonly events: EventsResult | null;
};

export async function measureWaits(rounds: number, log: Log, sections: ReadonlySet<WaitsSection> = new Set(WAITS_SECTIONS), shape: WaitsShape = WAITS): Promise<WaitsResult> {
  const asleep = sections.has("asleep") ? await measureAsleep(rounds, log, shape) : null;
  const burst = sections.has("burst") ? await measureTimers(shape.burst, 1_000, log) : null;
  const steady = sections.has("steady") ? await measureTimers(shape.steadyPerS * shape.steadySeconds, shape.steadySeconds * 1_000, log) : null;
  const events = sections.has("events") ? await measureEvents(shape.events, shape.eventsPerS, log) : null;
  return { shape, asleep, burst, steady, events };
}
