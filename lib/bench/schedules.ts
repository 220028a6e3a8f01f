/**
 * Schedules at scale (issue 30's bench): 1,000 schedules due in the same minute — each
 * `M H * * *`, so all due at the same instant, second 0 of that minute — fired by the keepers of
 * two worker processes (direct transport, the waits part's settings), which also run the requests
 * they start (`bench`, one no-op step). Lateness is each firing's `fired_at` (the clock of the
 * statement that records it, once its request is written in the same transaction) minus its due
 * time, on the database clock. Duplicates are counted by idempotency key: there must be none.
 */
import type { Pool } from "pg";
import { registrationOf } from "@/lib/definitions/registration";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { registerWorkerSession, stopSession } from "@/lib/engine/session";
import { createSchedule } from "@/lib/schedules/manage";
import { FENCELINE_CONCURRENCY, FENCELINE_PROCESSES, freshDatabase } from "./engines";
import { spawnChild, type BenchChild } from "./processes";
import { percentile, round, sleep } from "./stats";
import { benchNoop } from "./workflows";

export type SchedulesResult = {
  readonly schedules: number;
  readonly fired: number;
  readonly duplicateFirings: number;
  readonly requestsStarted: number;
  readonly dueAt: string;
  /** fired_at − due_at, ms, on the database clock. */
  readonly latenessMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** From the due time to the last firing recorded, ms. */
  readonly allFiredAfterMs: number;
};

/** Time from the seeding's start to the due minute: creating the schedules and starting the workers fit well inside. */
const LEAD_MS = 40_000;
const TIMEOUT_MS = 3 * 60_000;

export async function measureSchedules(count: number, log: (line: string) => void): Promise<SchedulesResult> {
  const db = await freshDatabase("schedules");
  const children: BenchChild[] = [];
  try {
    await deployMigrations(db.url);
    const session = (await registerWorkerSession(db.pool, { transport: "direct", registration: registrationOf([benchNoop]) })).sessionId;
    const due = await dueMinute(db.pool);
    log(`schedules: ${count} schedules due at ${due.toISOString()} (cron "${due.getUTCMinutes()} ${due.getUTCHours()} * * *", UTC)`);
    const seedStarted = performance.now();
    for (let n = 0; n < count; n += 1) {
      await createSchedule(
        db.pool,
        {
          name: `bench-${n}`,
          kind: benchNoop.kind,
          version: benchNoop.version,
          input: { n },
          dueTimeField: null,
          cron: `${due.getUTCMinutes()} ${due.getUTCHours()} * * *`,
          timeZone: "UTC",
          dstGap: "shift",
          overlap: "skip",
          catchUp: "latest",
          catchUpLimit: 1,
        },
        "schedule",
        "bench",
      );
    }
    await stopSession(db.pool, session, "bench seeding done");
    log(`  created in ${Math.round(performance.now() - seedStarted)} ms; starting ${FENCELINE_PROCESSES} workers`);
    const { rows: first } = await db.pool.query<{ next: Date }>(`SELECT min(next_due_at) AS next FROM schedule`);
    if (first[0]!.next.getTime() !== due.getTime()) throw new Error(`schedules bench: the schedules are first due at ${first[0]!.next.toISOString()}, not ${due.toISOString()}`);
    for (let i = 0; i < FENCELINE_PROCESSES; i += 1) {
      children.push(spawnChild({ role: "fenceline-worker", transport: "direct", databaseUrl: db.url, concurrency: FENCELINE_CONCURRENCY, waits: true }));
    }
    await Promise.all(children.map((child) => child.ready));
    const { rows: before } = await db.pool.query<{ late: boolean }>(`SELECT now() > $1::timestamptz AS late`, [due]);
    if (before[0]!.late) throw new Error("schedules bench: the workers started after the due time; raise LEAD_MS");

    const giveUpAt = Date.now() + TIMEOUT_MS;
    for (;;) {
      const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM schedule_firing`);
      if (rows[0]!.n >= count) break;
      if (Date.now() > giveUpAt) throw new Error(`schedules bench: ${rows[0]!.n} of ${count} fired after ${TIMEOUT_MS / 1000} s`);
      await sleep(500);
    }
    const { rows: firings } = await db.pool.query<{ lateness_ms: number; state: string }>(
      `SELECT (extract(epoch FROM (fired_at - due_at)) * 1000)::float8 AS lateness_ms, state FROM schedule_firing`,
    );
    const { rows: counts } = await db.pool.query<{ duplicates: number; requests: number }>(
      `SELECT (SELECT count(*) FROM (SELECT idempotency_key FROM workflow WHERE idempotency_key LIKE 'schedule:%' GROUP BY 1 HAVING count(*) > 1) d)::int AS duplicates,
              (SELECT count(*) FROM workflow WHERE idempotency_key LIKE 'schedule:%')::int AS requests`,
    );
    const lateness = firings.map((f) => f.lateness_ms).sort((a, b) => a - b);
    const result: SchedulesResult = {
      schedules: count,
      fired: firings.filter((f) => f.state === "started").length,
      duplicateFirings: counts[0]!.duplicates + Math.max(0, counts[0]!.requests - firings.length),
      requestsStarted: counts[0]!.requests,
      dueAt: due.toISOString(),
      latenessMs: { p50: round(percentile(lateness, 50)), p99: round(percentile(lateness, 99)), max: round(lateness.at(-1) ?? 0) },
      allFiredAfterMs: round(lateness.at(-1) ?? 0),
    };
    log(`  fired ${result.fired}: lateness p50 ${result.latenessMs.p50} ms, p99 ${result.latenessMs.p99} ms, max ${result.latenessMs.max} ms; duplicates ${result.duplicateFirings}`);
    return result;
  } finally {
    for (const child of children) await child.stop();
    await db.drop();
  }
}

/** The first whole minute at least LEAD_MS from now on the database clock. */
async function dueMinute(pool: Pool): Promise<Date> {
  const { rows } = await pool.query<{ due: Date }>(`SELECT date_trunc('minute', now() + $1 * interval '1 millisecond') + interval '1 minute' AS due`, [LEAD_MS]);
  return rows[0]!.due;
}
