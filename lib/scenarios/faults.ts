/**
 * The fault scripts, one per fault kind. Each drives one cell: spawns workers, creates workflows,
 * injects its fault at a known point (checkpoint trace lines, never sleeps where a line can be
 * awaited), records what it injected and when (for recovery latency), and leaves at least one
 * healthy worker running so the cell can settle.
 */
import { createSchedule, pauseSchedule } from "@/lib/schedules/manage";
import { checkpointNames } from "@/lib/worker/hooks";
import type { Cell } from "./cell";
import { checkpointLine, measureClockOffset, parseCheckpoint, sleep, waitUntil, type Spawned } from "./processes";
import { TIMING, type FaultKind } from "./types";
import { failover } from "./failover";
import { runRestoreDrill } from "./restore";
import { scheduleTakeover } from "./schedule-takeover";
import { cancelRequest } from "@/lib/requests/read";
import { digestOf } from "@/lib/demo/destination/service";

/** How long the destination holds a paused worker's request: past TTL + scan + the rescuer's retry. */
const HOLD_MS = 4_500;
/** ±2×TTL: the clock-offset workers' wall clocks. */
const OFFSET_S = (2 * TIMING.leaseTtlMs) / 1000;

type Script = (cell: Cell) => Promise<void>;

/** Waits until `workers` together printed `name` for `count` distinct steps; returns (step, term, worker). */
async function reached(workers: Spawned[], name: string, count: number, timeoutMs = 30_000) {
  const pattern = checkpointLine(name);
  return waitUntil(
    `${count} step(s) at checkpoint ${name}`,
    async () => {
      const seen = workers.flatMap((worker) => worker.linesMatching(pattern).map((line) => ({ ...parseCheckpoint(line), worker })));
      const distinct = [...new Map(seen.map((entry) => [entry.stepId, entry])).values()];
      return distinct.length >= count ? distinct : undefined;
    },
    timeoutMs,
    50,
  );
}

/** The checkpoints of a step that calls its destination: the cells' workflows have no wait step (the waits cell kills around `parked`). */
const callCheckpoints = checkpointNames.filter((name) => name !== "parked");

/**
 * The victims each hold a step at the checkpoint its line names: a rescuer starts, then every
 * victim is SIGKILLed, and each held step's recovery is timed from that moment.
 */
async function killHolders(cell: Cell, victims: readonly Spawned[], held: readonly string[], fault: string): Promise<void> {
  for (const victim of victims) cell.markHung(victim);
  const rescuer = cell.spawnWorker({ role: "rescuer" });
  cell.mustSurvive.add(rescuer);
  await cell.ready(rescuer);
  const faultAt = await cell.dbNow();
  for (const victim of victims) victim.process.kill("SIGKILL");
  await Promise.all(victims.map((victim) => victim.exited));
  cell.inject(fault, victims.length);
  for (const line of held) {
    const { stepId, term } = parseCheckpoint(line);
    cell.latencyProbes.push({ stepId, term, faultAt });
  }
}

/**
 * One victim holding a step at each checkpoint of a call: `offer(n)` makes n steps ready. A victim
 * holding at `receipt_committed` has finished its step, and its receipt's round trip claims more
 * work for the freed slot, which it would then hold as well, leaving another victim without a
 * step until the first one's attempt deadline. So it starts last, once every other victim holds
 * its step and nothing else is ready. Answers the victims and their lines, in checkpoint order.
 */
async function victimsHolding(cell: Cell, role: string, offer: (count: number) => Promise<void>): Promise<{ victims: Spawned[]; held: string[] }> {
  const spawn = (name: (typeof callCheckpoints)[number]) => cell.spawnWorker({ role: `${role}-${name}`, pauseAt: name, concurrency: 1 });
  const holding = callCheckpoints.slice(0, -1);
  const last = callCheckpoints.at(-1)!;
  const victims = holding.map(spawn);
  await cell.ready(...victims);
  await offer(holding.length);
  const held = await Promise.all(victims.map((victim, i) => victim.waitForLine(checkpointLine(holding[i]!), 40_000)));
  const finisher = spawn(last);
  await cell.ready(finisher);
  await offer(1);
  held.push(await finisher.waitForLine(checkpointLine(last), 40_000));
  return { victims: [...victims, finisher], held };
}

/** SIGKILL one worker at each checkpoint of a call, with a rescuer already running. */
const kill: Script = async (cell) => {
  const { victims, held } = await victimsHolding(cell, "kill-at", async (count) => void (await cell.createWorkflows(count)));
  await killHolders(cell, victims, held, "sigkill");
};

/**
 * Undos under SIGKILL: requests deliver once (a worker that then stops), wait, and are cancelled;
 * each undo is taken by a worker that holds at one checkpoint of the call and is SIGKILLed there,
 * with a rescuer running. Every request must end cancelled, or in review where an undo's outcome
 * is unknown at an opaque destination.
 */
const undo: Script = async (cell) => {
  const first = cell.spawnWorker({ role: "deliverer" });
  await cell.ready(first);
  const { ids } = await deliveredUndoRequests(cell, callCheckpoints.length);
  first.process.kill("SIGTERM");
  await first.exited;
  // Each cancel makes its request's undo ready.
  let cancelled = 0;
  const { victims, held } = await victimsHolding(cell, "kill-undo-at", async (count) => {
    await cancelAll(cell, ids.slice(cancelled, cancelled + count));
    cancelled += count;
  });
  await killHolders(cell, victims, held, "sigkill-undo");
};

/** `count` requests of the cell's `scenario-undo-<contract>` and their keys, once each delivery has its receipt (its request waits). */
async function deliveredUndoRequests(cell: Cell, count: number): Promise<{ ids: string[]; keys: string[] }> {
  const keys = Array.from({ length: count }, (_, i) => `${cell.seed}-${i}`);
  const ids = await cell.createRequests(`scenario-undo-${cell.contract}`, keys.map((key) => ({ key })));
  await waitUntil(
    "every delivery to have its receipt",
    async () => ((await cell.count(`SELECT count(*)::int AS n FROM event_wait WHERE workflow_id = ANY($1::uuid[])`, [ids])) >= ids.length ? true : undefined),
    30_000,
    100,
  );
  return { ids, keys };
}

async function cancelAll(cell: Cell, ids: readonly string[]): Promise<void> {
  for (const id of ids) await cancelRequest(cell.engine, id, null, "scenario: cancelled after its delivery");
  cell.inject("cancel-after-effect", ids.length);
}

/**
 * Undos whose answer is lost: requests deliver, wait and are cancelled, and the destination
 * commits each undo and drops its answer. `dropFirstResponse` draws nothing, so every undo meets
 * it at its first call however soon it is retried; the deliveries have their receipts before it
 * is set, so only undos meet it. A fenced or idempotent undo is retried under its identity and
 * applies once, and its request ends cancelled; an opaque one goes to review and its request stays
 * cancelling, never counted as undone (the checker's invariants 6, 7 and 12 judge the same rows).
 */
const undoDropResponse: Script = async (cell) => {
  const workers = [cell.spawnWorker({ concurrency: 4 }), cell.spawnWorker({ concurrency: 4 })];
  for (const worker of workers) cell.mustSurvive.add(worker);
  await cell.ready(...workers);
  const { ids, keys } = await deliveredUndoRequests(cell, cell.int(4, 8));
  await cell.destination.setFaults({ seed: cell.seed, dropFirstResponse: [cell.contract] });
  await cancelAll(cell, ids);
  const dropped = await waitUntil(
    "a dropped answer for every undo",
    async () => {
      const { rows } = await cell.destinationPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM destination.incident WHERE what = 'dropped_response'`);
      return rows[0]!.n >= ids.length ? rows[0]!.n : undefined;
    },
    30_000,
    50,
  );
  cell.inject("undo-response-dropped", dropped);

  const inReview = cell.contract === "opaque";
  const undos = () =>
    cell.engine.query<{ workflow_id: string; status: string; state: string; open_cases: number }>(
      `SELECT u.workflow_id, w.status::text, u.state::text,
              (SELECT count(*)::int FROM review_case c WHERE c.step_id = u.id AND c.status = 'open') AS open_cases
       FROM step u JOIN workflow w ON w.id = u.workflow_id WHERE u.undoes_step_id IS NOT NULL AND u.workflow_id = ANY($1::uuid[])`,
      [ids],
    );
  const settled = await waitUntil(
    inReview ? "every undo in review" : "every request cancelled",
    async () => {
      const { rows } = await undos();
      const done = rows.filter((row) => (inReview ? row.state === "indeterminate" && row.open_cases === 1 : row.state === "completed" && row.status === "cancelled"));
      return rows.length === ids.length && done.length === ids.length ? rows : undefined;
    },
    60_000,
    150,
  ).catch(async () => {
    cell.fail(`expected every undo ${inReview ? "in review" : "completed and its request cancelled"}; found ${JSON.stringify((await undos()).rows)}`);
    return (await undos()).rows;
  });
  if (inReview && settled.some((row) => row.status !== "cancelling")) cell.fail(`an undo in review left its request other than cancelling: ${JSON.stringify(settled)}`);
  // The answers were lost after the undos applied: each undo's body (the workflow's `{ undo: key }`)
  // applied at the destination exactly once, whatever identity or key it was sent under.
  const digests = keys.map((key) => digestOf({ undo: key }));
  const { rows: effects } = await cell.destinationPool.query<{ payload_digest: string; n: number }>(
    `SELECT payload_digest, count(*)::int AS n FROM destination.effect WHERE payload_digest = ANY($1::text[]) GROUP BY 1`,
    [digests],
  );
  const applied = new Map(effects.map((row) => [row.payload_digest, row.n]));
  const notOnce = keys.filter((_, i) => applied.get(digests[i]!) !== 1);
  if (notOnce.length > 0) cell.fail(`undos not applied exactly once at the destination (key: effects): ${notOnce.map((key) => `${key}: ${applied.get(digestOf({ undo: key })) ?? 0}`).join(", ")}`);
  cell.figure("undos", {
    requests: ids.length,
    answersDropped: dropped,
    appliedOnce: keys.length - notOnce.length,
    cancelled: settled.filter((row) => row.status === "cancelled").length,
    inReview: settled.filter((row) => row.open_cases > 0).length,
  });
};

/**
 * A worker stopped (SIGSTOP) while its requests are in flight, past its lease TTL: recovery hands
 * the steps to a rescuer, then the paused worker continues (SIGCONT) and tries to write under its
 * stale term. The destination holds the paused worker's requests (latency set before they were
 * sent, cleared right after), so they land after the rescuer's: a fenced destination sees a stale
 * term, the others a repeat.
 */
async function pauseInFlight(cell: Cell, victims: Spawned[], stepsPerVictim: number, rescuerOptions: Parameters<Cell["spawnWorker"]>[0] = {}) {
  const total = victims.length * stepsPerVictim;
  // The rescuer starts before the work exists and is stopped until the victims hold every step:
  // its start-up takes seconds on a loaded machine, and must not eat into the destination's hold.
  const rescuer = cell.spawnWorker({ role: "rescuer", ...rescuerOptions });
  cell.mustSurvive.add(rescuer);
  await cell.ready(...victims, rescuer);
  cell.stop(rescuer);
  await cell.destination.setFaults({ seed: cell.seed, kinds: { [cell.contract]: { latency: { fixedMs: HOLD_MS, jitterMs: 0 } } } });
  await cell.createWorkflows(total);
  await reached(victims, "claimed", total);
  cell.resume(rescuer);
  const reachedInvocation = await reached(victims, "invocation_began", total);
  // The requests leave right after the checkpoint line; give them time to reach the destination.
  await sleep(250);
  const faultAt = await cell.dbNow();
  for (const victim of victims) cell.stop(victim);
  const sentAt = Date.now();
  cell.inject("sigstop", victims.length);
  await cell.destination.setFaults({ seed: cell.seed });
  // On a loaded machine a victim can finish a step before the pause (its held request came back
  // while the others were still being claimed): only the steps a victim still held are stranded.
  const { rows: finished } = await cell.engine.query<{ step_id: string; fencing_term: string }>(
    `SELECT a.step_id, a.fencing_term FROM receipt r JOIN attempt a ON a.id = r.attempt_id WHERE a.step_id = ANY($1::uuid[])`,
    [reachedInvocation.map((entry) => entry.stepId)],
  );
  const invoked = reachedInvocation.filter(({ stepId, term }) => !finished.some((row) => row.step_id === stepId && Number(row.fencing_term) === term));
  if (invoked.length === 0) cell.fail("every victim step finished before the pause: nothing was stranded");
  for (const { stepId, term } of invoked) cell.latencyProbes.push({ stepId, term, faultAt });

  // Recovery decided every stranded step, the rescuer finished them, and the held requests landed.
  await waitUntil(
    "recovery of the paused worker's steps",
    async () =>
      (await cell.count(
        `SELECT count(DISTINCT step_id)::int AS n FROM recovery_decision WHERE step_id = ANY($1::uuid[])`,
        [invoked.map((entry) => entry.stepId)],
      )) >= invoked.length,
    20_000,
  );
  await cell.waitSettled(15_000);
  await sleep(Math.max(0, sentAt + HOLD_MS + 300 - Date.now()));

  const rejectionsBefore = await cell.count(`SELECT count(*)::int AS n FROM fencing_rejection`);
  for (const victim of victims) cell.resume(victim);
  cell.inject("sigcont", victims.length);
  // The resumed worker notices its lost authority and its last writes are refused and recorded.
  await waitUntil(
    "the resumed worker's stale writes",
    async () => (await cell.count(`SELECT count(*)::int AS n FROM fencing_rejection`)) > rejectionsBefore,
    5_000,
  ).catch(() => cell.note("the resumed worker wrote nothing under its stale term within 5 s"));
}

const pause: Script = async (cell) => {
  const victim = cell.spawnWorker({ role: "paused", concurrency: 4 });
  await pauseInFlight(cell, [victim], 4);
};

/**
 * Workers whose wall clocks run 2×TTL ahead and behind (libfaketime); both are paused in flight
 * past the TTL like the pause cell, and the rescuer that runs the recovery scan is itself 2×TTL
 * ahead, so an expiry judged on a worker's clock would show as an early decision.
 */
const clockOffset: Script = async (cell) => {
  // The skew must be real, or this cell proves nothing.
  for (const sign of [1, -1]) {
    const measured = await measureClockOffset(`${sign > 0 ? "+" : "-"}${OFFSET_S}s`);
    if (Math.abs(measured - sign * OFFSET_S * 1000) > 500) cell.fail(`libfaketime did not skew the clock: wanted ${sign * OFFSET_S * 1000} ms, measured ${Math.round(measured)} ms`);
    else cell.note(`worker clock offset ${sign > 0 ? "+" : "-"}${OFFSET_S}s verified (measured ${Math.round(measured)} ms)`);
  }
  const ahead = cell.spawnWorker({ role: `clock+${OFFSET_S}s`, concurrency: 2, clockOffset: `+${OFFSET_S}s` });
  const behind = cell.spawnWorker({ role: `clock-${OFFSET_S}s`, concurrency: 2, clockOffset: `-${OFFSET_S}s` });
  cell.inject("clock-offset", 3);
  await pauseInFlight(cell, [ahead, behind], 2, { clockOffset: `+${OFFSET_S}s` });
};

/** Commit-then-drop: every response is dropped until each step's effect has been dropped once. */
const dropResponse: Script = async (cell) => {
  const workers = [cell.spawnWorker({ concurrency: 4 }), cell.spawnWorker({ concurrency: 4 })];
  for (const worker of workers) cell.mustSurvive.add(worker);
  await cell.ready(...workers);
  await cell.destination.setFaults({ seed: cell.seed, kinds: { [cell.contract]: { dropResponseRate: 1 } } });
  const steps = await cell.createWorkflows(cell.int(4, 8));
  const droppedIdentities = async () => {
    const { rows } = await cell.destinationPool.query<{ n: number }>(
      `SELECT count(DISTINCT request_identity)::int AS n FROM destination.incident WHERE what = 'dropped_response'`,
    );
    return rows[0]!.n;
  };
  await waitUntil("a dropped response for every step", async () => (await droppedIdentities()) >= steps.length, 30_000, 50);
  await cell.destination.setFaults({ seed: cell.seed });
  const { rows } = await cell.destinationPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM destination.incident WHERE what = 'dropped_response'`);
  cell.inject("response-dropped", rows[0]!.n);
};

/** pg_terminate_backend of every worker connection, every 300–700 ms for 3 s, while work is in flight. */
const connKill: Script = async (cell) => {
  const workers = [cell.spawnWorker({ concurrency: 4 }), cell.spawnWorker({ concurrency: 4 })];
  for (const worker of workers) cell.mustSurvive.add(worker);
  await cell.ready(...workers);
  await cell.destination.setFaults({ seed: cell.seed, kinds: { [cell.contract]: { latency: { fixedMs: 150, jitterMs: 300 } } } });
  await cell.createWorkflows(cell.int(10, 14));
  await reached(workers, "invocation_began", 2);
  const database = decodeURIComponent(new URL(cell.engineUrl).pathname.slice(1));
  const until = Date.now() + 3_000;
  while (Date.now() < until) {
    const { rows } = await cell.engine.query<{ n: number }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE datname = $1 AND application_name LIKE 'fl-scn-w%'`,
      [database],
    );
    cell.inject("backend-terminated", rows[0]!.n);
    cell.inject("conn-kill-round");
    await sleep(cell.int(300, 700));
  }
  await cell.destination.setFaults({ seed: cell.seed });
};

/** Restart the engine's PostgreSQL twice while work is in flight: `-m fast`, then `-m immediate` with 1 s down. */
const dbRestart: Script = async (cell) => {
  if (!cell.cluster) throw new Error("db-restart needs its own cluster");
  const workers = [cell.spawnWorker({ concurrency: 4 }), cell.spawnWorker({ concurrency: 4 })];
  for (const worker of workers) cell.mustSurvive.add(worker);
  await cell.ready(...workers);
  await cell.destination.setFaults({ seed: cell.seed, kinds: { [cell.contract]: { latency: { fixedMs: 200, jitterMs: 300 } } } });
  await cell.createWorkflows(cell.int(10, 14));
  await reached(workers, "invocation_began", 2);
  await cell.cluster.restart("fast");
  cell.inject("restart-fast");
  await reached(workers, "invocation_began", 5, 30_000).catch(() => cell.note("little progress between the two restarts"));
  await cell.cluster.restart("immediate", 1_000);
  cell.inject("restart-immediate");
  await cell.destination.setFaults({ seed: cell.seed });
};

/**
 * Two workers die holding eight leases (four before invocation, four after the destination
 * answered); four recoverers scanning every 50 ms race for the same expired leases.
 */
const dupRecoverers: Script = async (cell) => {
  await cell.createWorkflows(8);
  const early = cell.spawnWorker({ role: "victim-early", pauseAt: "identity_persisted", concurrency: 4 });
  const late = cell.spawnWorker({ role: "victim-late", pauseAt: "destination_answered", concurrency: 4 });
  const held = [...(await reached([early], "identity_persisted", 4)), ...(await reached([late], "destination_answered", 4))];
  cell.markHung(early);
  cell.markHung(late);
  const recoverers = Array.from({ length: 4 }, () => cell.spawnWorker({ role: "recoverer", recoveryIntervalMs: 50 }));
  for (const recoverer of recoverers) cell.mustSurvive.add(recoverer);
  await cell.ready(...recoverers);
  const faultAt = await cell.dbNow();
  early.process.kill("SIGKILL");
  late.process.kill("SIGKILL");
  await Promise.all([early.exited, late.exited]);
  cell.inject("sigkill", 2);
  cell.inject("concurrent-recoverers", recoverers.length);
  for (const { stepId, term } of held) cell.latencyProbes.push({ stepId, term, faultAt });
};

/**
 * Requests that wait: each sleeps on a timer (due 1.5–4 s after it is created), then waits for
 * `scenario.signal` with its key. A third get their signal before the request exists (kept for the
 * wait), a third while they wait, and a third none, or one sent as their timeout comes due (the
 * race has one outcome either way); every signal is sent twice with one idempotency key. Around the
 * due times a coordinator (a worker whose keeper fires timers) gets SIGKILL and PostgreSQL is
 * restarted `-m fast`, then `-m immediate` with 1 s down.
 *
 * Meanwhile three schedules start a `scenario` request every second (overlap allow, catch-up all):
 * the keepers that fire timers fire them, through the same kill and restarts. Invariant 13 (the
 * checker): no due time starts two requests, none fires early, and every second from the first
 * firing to the last due time reached has its firing (none missed within the catch-up policy).
 * The schedules are paused once the keepers have reached a due time after the last restart.
 */
const waits: Script = async (cell) => {
  if (!cell.cluster) throw new Error("the waits cell needs its own cluster");
  const doomed = cell.spawnWorker({ role: "killed-keeper", concurrency: 4 });
  const keeper = cell.spawnWorker({ concurrency: 4 });
  cell.mustSurvive.add(keeper);
  await cell.ready(doomed, keeper);
  const schedules = ["scenario-every-second-a", "scenario-every-second-b", "scenario-every-second-c"];
  for (const name of schedules) {
    await createSchedule(
      cell.engine,
      { name, kind: "scenario", version: 1, input: { contract: cell.contract }, dueTimeField: null, cron: "* * * * * *", timeZone: "UTC", dstGap: "shift", overlap: "allow", catchUp: "all", catchUpLimit: 100 },
      "scenario-harness",
      "scenario-harness",
    );
  }
  const count = cell.int(18, 24);
  const plan = Array.from({ length: count }, (_, i) => ({
    key: `${cell.seed}-${i}`,
    how: (["early", "waiting", "timeout"] as const)[i % 3]!,
    sleepMs: 1_500 + Math.round((2_500 * i) / count),
    timeoutMs: i % 3 === 2 ? 1_500 : 30_000,
  }));
  for (const [n, { key, how }] of plan.entries()) {
    if (how !== "early") continue;
    const sent = await cell.sendEvent(key, `early-${key}`, n);
    if (sent.consumedBy !== null) cell.fail(`the signal for ${key} was consumed before any request waited for it`);
  }
  const startedAt = Date.now();
  const ids = await cell.createWaitRequests(plan);
  const at = (ms: number) => sleep(Math.max(0, startedAt + ms - Date.now()));

  await at(1_800);
  doomed.process.kill("SIGKILL");
  await doomed.exited;
  cell.inject("sigkill-coordinator");
  const late = cell.spawnWorker({ role: "late-keeper", concurrency: 4 });
  cell.mustSurvive.add(late);
  await cell.ready(late);
  await at(2_600);
  await cell.cluster.restart("fast");
  cell.inject("restart-fast");
  await at(3_500);
  await cell.cluster.restart("immediate", 1_000);
  cell.inject("restart-immediate");

  // Signals for waits that began: sent twice each, the second as a client whose answer was lost.
  const waitOf = async (workflowId: string) => {
    const { rows } = await cell.engine.query<{ state: string; timeout_ms: number }>(
      `SELECT w.state, extract(epoch FROM (w.timeout_at - now())) * 1000 AS timeout_ms FROM event_wait w WHERE w.workflow_id = $1`,
      [workflowId],
    );
    return rows[0];
  };
  await Promise.all(
    plan.map(async ({ key, how }, i) => {
      if (how === "early") {
        await waitUntil(`the wait of ${key} to begin`, async () => (await waitOf(ids[i]!)) !== undefined, 30_000, 100);
        await cell.sendEvent(key, `early-${key}`, i);
        cell.inject("event-sent-twice");
        return;
      }
      const wait = await waitUntil(`the wait of ${key} to begin`, () => waitOf(ids[i]!), 30_000, 50);
      if (how === "waiting") {
        await cell.sendEvent(key, `waiting-${key}`, i);
        await cell.sendEvent(key, `waiting-${key}`, i);
        cell.inject("event-sent-twice");
      } else if (i % 2 === 0) {
        // Sent as the timeout comes due: either the wait takes it or it times out and keeps none.
        await sleep(Math.max(0, Number(wait.timeout_ms) - 20));
        await cell.sendEvent(key, `race-${key}`, i);
        cell.inject("event-racing-timeout");
      }
    }),
  );

  // The keepers reached due times after the last restart; then the schedules stop, so the cell settles.
  const { rows: restarted } = await cell.engine.query<{ now: Date }>(`SELECT now()`);
  await waitUntil(
    "the schedules' keepers to reach a due time after the restarts",
    async () => (await cell.engine.query(`SELECT 1 FROM schedule WHERE last_due_at < $1 AND name = ANY($2)`, [restarted[0]!.now, schedules])).rows.length === 0,
    30_000,
    100,
  );
  for (const name of schedules) await pauseSchedule(cell.engine, name, null, "scenario-harness", "the cell ends");
  const { rows: fired } = await cell.engine.query<{ firings: number; started: number; max_lateness_ms: number }>(
    `SELECT count(*)::int AS firings, count(*) FILTER (WHERE state = 'started')::int AS started,
            max(extract(epoch FROM (fired_at - due_at)) * 1000)::int AS max_lateness_ms FROM schedule_firing`,
  );
  cell.figures.schedules = fired[0];
};

/**
 * The restore drill (lib/scenarios/restore.ts), twice: without an epoch transition the stale
 * write must get through at the destination — if it does not, the drill proves nothing — and with
 * one it must be refused.
 */
const restore: Script = async (cell) => {
  const hazard = await runRestoreDrill(cell.engine, cell.destination.url, { withTransition: false, label: `no-transition-${cell.seed}` });
  cell.inject("restore");
  cell.note(`without a transition: stale (${hazard.staleTerm.epoch}, ${hazard.staleTerm.term}) after replacement (${hazard.replacementTerm.epoch}, ${hazard.replacementTerm.term}) ${hazard.staleWriteAcceptedAtDestination ? "accepted" : "refused"} at the destination`);
  if (!hazard.staleWriteAcceptedAtDestination) cell.fail("without an epoch transition the stale write was refused: the drill did not reproduce the hazard");
  const fenced = await runRestoreDrill(cell.engine, cell.destination.url, { withTransition: true, label: `transition-${cell.seed}` });
  cell.inject("restore");
  cell.inject("epoch-transition");
  cell.note(`with a transition to epoch ${fenced.epochAfter}: stale (${fenced.staleTerm.epoch}, ${fenced.staleTerm.term}) ${fenced.staleWriteAcceptedAtDestination ? "accepted" : "refused"} at the destination`);
  if (fenced.staleWriteAcceptedAtDestination) cell.fail("after an epoch transition the fenced destination still accepted the stale write");
  if (!fenced.replacementAccepted) cell.fail("after an epoch transition the replacement could not complete the step");
  if (!hazard.staleEngineWriteRefused || !fenced.staleEngineWriteRefused) cell.fail("the engine accepted a write from the stale worker");
};

export const scripts: Record<FaultKind, Script> = {
  kill,
  pause,
  "drop-response": dropResponse,
  "conn-kill": connKill,
  "db-restart": dbRestart,
  "clock-offset": clockOffset,
  "dup-recoverers": dupRecoverers,
  restore,
  waits,
  "schedule-takeover": scheduleTakeover,
  undo,
  "undo-drop-response": undoDropResponse,
  "failover-sync": failover(true),
  "failover-async": failover(false),
  "failover-patroni-sync": failover(true),
  "failover-patroni-async": failover(false),
};

/** Faults whose cells must show a stale worker's write being refused. */
export const mustRejectStaleWrites: ReadonlySet<FaultKind> = new Set(["pause", "clock-offset", "restore"]);
/** Faults whose recovery latency is measured (the fault ends a live lease at a known moment). */
export const measuresLatency: ReadonlySet<FaultKind> = new Set(["kill", "pause", "clock-offset", "dup-recoverers", "undo"]);
