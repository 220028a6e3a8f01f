/**
 * The schedule-takeover cell (invariant 13 when the process that fires schedules dies). Schedules
 * are fired by every worker's keeper (DueWork, lib/waits/rooms.ts → lib/schedules/room.ts): there
 * is no leader, so the "standby" is either a peer already running or a process started to replace
 * the dead one. Four every-second schedules (catch-up all ×2, latest, none; overlap allow) run
 * through three phases:
 *
 *  1. Two keepers fire at once: both must have written firings (witnessed per process) before
 *     the cell goes on, so the race for the same due times happened.
 *  2. The keeper in the middle of a pass is SIGKILLed, holding the schedules' rows with its
 *     requests written but not committed; the peer already running takes over.
 *  3. The last keeper is SIGKILLed mid-pass the same way, with no keeper left: due times pass
 *     with nobody to fire them; a standby process starts and its first pass catches up.
 *
 * "Mid-pass" is exact, not timed: the harness holds, in an open transaction, a request with the
 * idempotency key of a due time two seconds ahead, so the pass that reaches that due time waits
 * on it inside its transaction (PostgreSQL says which backend waits, pg_blocking_pids); that
 * backend's process is the victim. After the kill the harness rolls its request back, so the due
 * time is left to the survivor. The checker then decides invariant 13 over the rows: no due time
 * twice, none early (the request's creation against its due time), none missed within each
 * schedule's catch-up policy. Figures in `detail.scheduleTakeover`.
 */
import type pg from "pg";
import { createWorkflows } from "@/lib/engine/workflow";
import { firingKey } from "@/lib/schedules/definition";
import { createSchedule, pauseSchedule } from "@/lib/schedules/manage";
import type { Cell } from "./cell";
import { SCENARIO_CLASS } from "./definitions";
import { waitUntil, type Spawned } from "./processes";

const OWNER = "scenario-harness";
const SCHEDULES = [
  { name: "takeover-all-a", catchUp: "all" },
  { name: "takeover-all-b", catchUp: "all" },
  { name: "takeover-latest", catchUp: "latest" },
  { name: "takeover-none", catchUp: "none" },
] as const;
const PROBE = SCHEDULES[0].name;

/**
 * The harness's witness of which process wrote each firing: a trigger in the cell's own database
 * (the engine records no writer). It writes in the keeper's transaction, so a pass that dies
 * leaves no witness either.
 */
const WITNESS = `
CREATE TABLE scenario_firing_writer (schedule_id uuid NOT NULL, due_at timestamptz NOT NULL, writer text NOT NULL, written_at timestamptz NOT NULL);
CREATE FUNCTION scenario_witness_firing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO scenario_firing_writer VALUES (NEW.schedule_id, NEW.due_at, current_setting('application_name'), clock_timestamp());
  RETURN NEW;
END $$;
CREATE TRIGGER scenario_witness_firing AFTER INSERT ON schedule_firing FOR EACH ROW EXECUTE FUNCTION scenario_witness_firing();`;

type Blocker = { client: pg.PoolClient; dueAt: Date };

/**
 * Holds, uncommitted, a request under the firing key of PROBE's due time two seconds after its
 * next: the keeper pass that reaches that due time waits on it, holding every schedule it took.
 */
async function holdNextPass(cell: Cell, scheduleId: string): Promise<Blocker> {
  const client = await cell.engine.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ next_due_at: Date }>(`SELECT next_due_at FROM schedule WHERE id = $1`, [scheduleId]);
    const dueAt = new Date(rows[0]!.next_due_at.getTime() + 2_000);
    const [held] = await createWorkflows(client, [
      {
        kind: "scenario",
        version: 1,
        input: { contract: cell.contract },
        requester: OWNER,
        idempotencyKey: firingKey(scheduleId, dueAt),
        steps: [{ name: "deliver", adapter: cell.contract, stepClass: SCENARIO_CLASS }],
      },
    ]);
    if (!held?.created) throw new Error(`the key of ${dueAt.toISOString()} was taken already: the keepers are more than 2 s ahead of next_due_at`);
    return { client, dueAt };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    client.release();
    throw error;
  }
}

/** The worker whose backend waits on the blocker: the keeper in the middle of its pass. */
async function keeperInPass(cell: Cell, blocker: Blocker): Promise<Spawned> {
  const pid = (await blocker.client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const name = await waitUntil(
    `a keeper's pass to reach ${blocker.dueAt.toISOString()} and wait on the held key`,
    async () => (await cell.engine.query<{ application_name: string }>(`SELECT application_name FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [pid])).rows[0]?.application_name,
    15_000,
    20,
  );
  const worker = cell.workers.find((candidate) => candidate.name === name && candidate.alive);
  if (!worker) throw new Error(`the backend waiting on the held key belongs to ${name}, not a live keeper of this cell`);
  return worker;
}

/**
 * SIGKILLs the keeper in the middle of the pass that reaches PROBE's due time two seconds ahead,
 * then lets that due time go (the dead pass rolls back). Returns the victim, the due time held
 * and the kill's moment (database clock).
 */
async function killKeeperInPass(cell: Cell, probeId: string): Promise<{ victim: Spawned; dueAt: Date; killedAt: Date }> {
  const blocker = await holdNextPass(cell, probeId);
  try {
    const victim = await keeperInPass(cell, blocker);
    cell.markHung(victim);
    const killedAt = await cell.dbNow();
    victim.process.kill("SIGKILL");
    await victim.exited;
    cell.inject("sigkill-keeper-in-pass");
    return { victim, dueAt: blocker.dueAt, killedAt };
  } finally {
    await blocker.client.query("ROLLBACK").catch(() => undefined);
    blocker.client.release();
  }
}

/** The first started firing of PROBE due at or after `dueAt`: its request's creation (database clock) and who wrote it. */
async function firstFiringFrom(cell: Cell, scheduleId: string, dueAt: Date) {
  return waitUntil(
    `a firing of ${PROBE} due at ${dueAt.toISOString()} or later`,
    async () =>
      (
        await cell.engine.query<{ due_at: Date; request_id: string; created_at: Date; writer: string }>(
          `SELECT f.due_at, f.request_id, w.created_at, x.writer FROM schedule_firing f JOIN workflow w ON w.id = f.request_id
           JOIN scenario_firing_writer x ON x.schedule_id = f.schedule_id AND x.due_at = f.due_at
           WHERE f.schedule_id = $1 AND f.due_at >= $2 ORDER BY f.due_at LIMIT 1`,
          [scheduleId, dueAt],
        )
      ).rows[0],
    30_000,
    50,
  );
}

const ms = (later: Date, earlier: Date) => later.getTime() - earlier.getTime();

export async function scheduleTakeover(cell: Cell): Promise<void> {
  await cell.engine.query(WITNESS);
  const keepers = [cell.spawnWorker({ role: "keeper-a" }), cell.spawnWorker({ role: "keeper-b" })];
  await cell.ready(...keepers);
  const ids = new Map<string, string>();
  try {
    for (const { name, catchUp } of SCHEDULES) {
      const { schedule } = await createSchedule(
        cell.engine,
        { name, kind: "scenario", version: 1, input: { contract: cell.contract }, dueTimeField: null, cron: "* * * * * *", timeZone: "UTC", dstGap: "shift", overlap: "allow", catchUp, catchUpLimit: 100 },
        OWNER,
        OWNER,
      );
      ids.set(name, schedule.id);
    }
    cell.figure("scheduleTakeover", await takeovers(cell, keepers, ids.get(PROBE)!));
  } finally {
    // The schedules stop whatever happened, so the cell settles; each request a firing started
    // must complete too (invariant 8 counts them as acknowledged).
    for (const name of ids.keys()) await pauseSchedule(cell.engine, name, null, OWNER, "the cell ends");
    const { rows: started } = await cell.engine.query<{ request_id: string }>(`SELECT request_id FROM schedule_firing WHERE state = 'started'`);
    cell.workflowIds.push(...started.map((row) => row.request_id));
  }
}

/** The three phases; returns the cell's figures. */
async function takeovers(cell: Cell, keepers: Spawned[], probeId: string): Promise<Record<string, unknown>> {
  // 1. Two keepers at once: both have fired before anything is killed.
  await waitUntil(
    "both keepers to have written firings",
    async () => (await cell.count(`SELECT count(DISTINCT writer)::int AS n FROM scenario_firing_writer WHERE writer = ANY($1)`, [keepers.map((k) => k.name)])) === 2,
    30_000,
    100,
  );
  cell.inject("keepers-at-once", keepers.length);

  // 2. The keeper in mid-pass dies; the peer already running takes over.
  const hot = await killKeeperInPass(cell, probeId);
  const peer = keepers.find((keeper) => keeper !== hot.victim)!;
  const hotTakeover = await firstFiringFrom(cell, probeId, hot.dueAt);
  if (hotTakeover.writer !== peer.name) cell.fail(`${PROBE} due ${hot.dueAt.toISOString()} was written by ${hotTakeover.writer}, not by the surviving peer ${peer.name}`);

  // 3. The last keeper dies in mid-pass; no keeper runs until a standby process has started.
  const cold = await killKeeperInPass(cell, probeId);
  const standby = cell.spawnWorker({ role: "standby" });
  cell.mustSurvive.add(standby);
  await cell.ready(standby);
  const standbyReadyAt = await cell.dbNow();
  const coldTakeover = await firstFiringFrom(cell, probeId, cold.dueAt);
  if (coldTakeover.writer !== standby.name) cell.fail(`${PROBE} due ${cold.dueAt.toISOString()} was written by ${coldTakeover.writer}, not by the standby ${standby.name}`);
  // The standby's first pass (one transaction: its requests share their creation time, compared
  // in the database, whose microseconds a Date would drop) caught every schedule up: each due
  // time of the outage for catch-up all (the checker counts them), and the latest one for latest
  // and none (for an every-second schedule, always under 1 s late).
  const { rows: caughtUp } = await cell.engine.query<{ name: string; started: number }>(
    `SELECT s.name, count(w.id)::int AS started FROM schedule s
     LEFT JOIN schedule_firing f ON f.schedule_id = s.id
     LEFT JOIN workflow w ON w.id = f.request_id AND w.created_at = (SELECT created_at FROM workflow WHERE id = $2)
     WHERE s.name = ANY($1) GROUP BY s.name`,
    [SCHEDULES.map((schedule) => schedule.name), coldTakeover.request_id],
  );
  const notCaughtUp = caughtUp.filter((row) => row.started === 0).map((row) => row.name);
  if (notCaughtUp.length > 0) cell.fail(`the standby's first pass started nothing for ${notCaughtUp.join(", ")} after the outage`);

  // A few due times of the standby alone before the schedules stop.
  await waitUntil(
    "the standby to fire two more due times of every schedule",
    async () => (await cell.count(`SELECT count(*)::int AS n FROM schedule WHERE name = ANY($1) AND last_due_at < $2`, [SCHEDULES.map((s) => s.name), new Date(coldTakeover.created_at.getTime() + 2_000)])) === 0,
    30_000,
    100,
  );

  const { rows: writers } = await cell.engine.query<{ writer: string; n: number }>(`SELECT writer, count(*)::int AS n FROM scenario_firing_writer GROUP BY writer ORDER BY writer`);
  const { rows: fired } = await cell.engine.query<{ firings: number; started: number; max_lateness_ms: number; missed_latest: number; missed_none: number }>(
    `SELECT count(*)::int AS firings, count(*) FILTER (WHERE f.state = 'started')::int AS started,
            round(max(extract(epoch FROM (w.created_at - f.due_at)) * 1000))::int AS max_lateness_ms,
            (SELECT missed::int FROM schedule WHERE name = 'takeover-latest') AS missed_latest,
            (SELECT missed::int FROM schedule WHERE name = 'takeover-none') AS missed_none
       FROM schedule_firing f LEFT JOIN workflow w ON w.id = f.request_id`,
  );
  return {
    ...fired[0],
    firingsByProcess: Object.fromEntries(writers.map((row) => [row.writer, row.n])),
    // Kill (database clock) → the first request of the held due time or later, created by the survivor.
    peerTakeoverMs: ms(hotTakeover.created_at, hot.killedAt),
    standbyTakeoverMs: ms(coldTakeover.created_at, cold.killedAt),
    standbyStartMs: ms(standbyReadyAt, cold.killedAt),
    standbyFirstFiringAfterReadyMs: ms(coldTakeover.created_at, standbyReadyAt),
    dueDuringOutage: Math.floor(ms(coldTakeover.created_at, cold.dueAt) / 1000) + 1,
  };
}
