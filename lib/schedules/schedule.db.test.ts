/**
 * Invariant 13: a schedule's due time starts at most one request; within its catch-up policy, at
 * least one. Several keepers firing the same schedules at once start each due time once; a second
 * pass over a due time already fired starts nothing; after a downtime the missed due times start
 * per the declared catch-up (none, the latest, all up to a bound); the overlap policies skip,
 * queue one, or allow while the previous request runs; the daylight-saving rules hold on the
 * database too; pause and resume are audited and start nothing that fell due while paused; a
 * bad definition is refused field by field with nothing written.
 */
import { describe, expect } from "vitest";
import { z } from "zod";
import { createPool } from "@/lib/db/pool";
import { dbTest as test, type TestDatabase } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { registerDefinitions } from "@/lib/engine/registration";
import { registerSession } from "@/lib/engine/session";
import { cancelWorkflow } from "@/lib/engine/workflow";
import type { ScheduleSpec } from "./definition";
import { InvalidScheduleError, ScheduleExistsError } from "./errors";
import { createSchedule, deleteSchedule, pauseSchedule, readSchedule, resumeSchedule } from "./manage";
import { scheduleRoom } from "./room";

const milestone = { upcoming: "Later", current: "Ticking", done: "Ticked" };
const tick = defineWorkflow({ kind: "tick", version: 1, input: z.object({ label: z.string(), dueAt: z.string().optional() }) }).step("only", {
  milestone,
  run: async () => done(),
});

let registered: Promise<void> | null = null;
const prepare = (db: TestDatabase) =>
  (registered ??= (async () => {
    await registerDefinitions(db.pool, await registerSession(db.pool, "direct"), registrationOf([tick]));
  })());

const spec = (name: string, overrides: Partial<ScheduleSpec> = {}): ScheduleSpec => ({
  name,
  kind: "tick",
  version: 1,
  input: { label: name },
  dueTimeField: null,
  cron: "* * * * * *",
  timeZone: "UTC",
  dstGap: "shift",
  overlap: "allow",
  catchUp: "all",
  catchUpLimit: 100,
  ...overrides,
});

type FiringRow = { due_at: Date; state: string; request_id: string | null; reason: string | null };
async function firingsOf(db: TestDatabase, name: string): Promise<FiringRow[]> {
  const { rows } = await db.pool.query<FiringRow>(
    `SELECT f.due_at, f.state, f.request_id, f.reason FROM schedule_firing f JOIN schedule s ON s.id = f.schedule_id WHERE s.name = $1 ORDER BY f.due_at`,
    [name],
  );
  return rows;
}

/** Puts a schedule's next due time back to `nextDueAt` (and its last to `lastDueAt`): the downtime of every keeper since then. */
async function backdate(db: TestDatabase, name: string, nextDueAt: string, lastDueAt: string | null = null): Promise<void> {
  await db.pool.query(`UPDATE schedule SET next_due_at = $2, last_due_at = $3 WHERE name = $1`, [name, nextDueAt, lastDueAt]);
}

/** Runs keeper passes until one starts nothing more and leaves nothing due. */
async function settle(db: TestDatabase): Promise<number> {
  let started = 0;
  for (;;) {
    const now = await scheduleRoom.settleDue(db.pool, 500);
    started += now;
    if (now === 0) return started;
  }
}

const dbYear = async (db: TestDatabase) => (await db.pool.query<{ y: number }>(`SELECT extract(year FROM now() AT TIME ZONE 'UTC')::int AS y`)).rows[0]!.y;

test.beforeEach(async ({ db }) => {
  await prepare(db);
});

describe("a due time starts at most one request", () => {
  test("four keepers firing twenty every-second schedules at once start each due time exactly once, never early, and miss none", { timeout: 30_000 }, async ({ db }) => {
    const names = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    for (const name of names) await createSchedule(db.pool, spec(name), "schedule", "admin@test");
    const pools = Array.from({ length: 4 }, () => createPool(db.url, { applicationName: "schedule-keeper", max: 2 }));
    try {
      // The keepers race until every schedule has fired at least three due times (an event, not a duration).
      let enough = false;
      const watch = (async () => {
        while (!enough) {
          const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM schedule s WHERE (SELECT count(*) FROM schedule_firing f WHERE f.schedule_id = s.id) < 3`);
          enough = rows[0]!.n === 0;
          if (!enough) await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      await Promise.all([
        watch,
        ...pools.map(async (pool) => {
          while (!enough) {
            if ((await scheduleRoom.settleDue(pool, 7)) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }),
      ]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    const { rows: duplicates } = await db.pool.query(`SELECT idempotency_key, count(*) FROM workflow WHERE idempotency_key LIKE 'schedule:%' GROUP BY 1 HAVING count(*) > 1`);
    expect(duplicates).toEqual([]);
    const { rows } = await db.pool.query<{ firings: number; started: number; requests: number; seconds: number }>(
      `SELECT count(*)::int AS firings, count(*) FILTER (WHERE f.state = 'started')::int AS started,
              count(DISTINCT f.request_id)::int AS requests,
              (SELECT sum(extract(epoch FROM (max_due - min_due)) + 1)::int
                 FROM (SELECT max(due_at) AS max_due, min(due_at) AS min_due FROM schedule_firing GROUP BY schedule_id) b) AS seconds
         FROM schedule_firing f`,
    );
    const { firings, started, requests, seconds } = rows[0]!;
    expect(firings).toBeGreaterThanOrEqual(60);
    expect({ started, requests }).toEqual({ started: firings, requests: firings });
    // Every second between each schedule's first and last firing has its firing: none missed.
    expect(seconds).toBe(firings);
    const { rows: workflows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM workflow WHERE idempotency_key LIKE 'schedule:%'`);
    expect(workflows[0]!.n).toBe(firings);
    // Never before its time on the database clock: each request is created (the pass's now(), the
    // clock it judged due times by) at or after its due time. fired_at is written after the pass's
    // requests, so it would hide a firing early by less than the pass took.
    const { rows: early } = await db.pool.query(
      `SELECT f.due_at, w.created_at FROM schedule_firing f JOIN workflow w ON w.id = f.request_id WHERE w.created_at < f.due_at`,
    );
    expect(early).toEqual([]);
    for (const name of names) await deleteSchedule(db.pool, name, null, "admin@test");
  });

  test("a second pass over a due time already fired (a schedule set back, as by a restored replica) starts no second request", async ({ db }) => {
    await createSchedule(db.pool, spec("replay", { cron: "0 0 1 1 *", catchUp: "all", catchUpLimit: 3 }), "schedule", "admin@test");
    await backdate(db, "replay", "2024-01-01T00:00:00Z");
    await settle(db);
    const first = await firingsOf(db, "replay");
    expect(first.map((f) => f.state)).toEqual(["started", "started", "started"]);
    await backdate(db, "replay", "2024-01-01T00:00:00Z");
    expect(await settle(db)).toBe(0);
    expect(await firingsOf(db, "replay")).toEqual(first);
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM workflow WHERE requester = 'schedule' AND input->>'label' = 'replay'`);
    expect(rows[0]!.n).toBe(3);
  });
});

describe("catch-up after a downtime", () => {
  // A yearly schedule set back to 2020: every keeper was down since, so the due times of 1 January
  // 2020 up to this year's were all missed; the latest is months old, never on time.
  const yearly = (name: string, catchUp: ScheduleSpec["catchUp"], catchUpLimit = 1) => spec(name, { cron: "0 0 1 1 *", catchUp, catchUpLimit });

  test("none starts nothing missed and counts it; latest starts the latest; all starts the latest up to its bound", async ({ db }) => {
    const year = await dbYear(db);
    const missedYears = year - 2020 + 1;
    for (const [name, catchUp, limit] of [["cu-none", "none", 1], ["cu-latest", "latest", 1], ["cu-all-3", "all", 3], ["cu-all-100", "all", 100]] as const) {
      await createSchedule(db.pool, yearly(name, catchUp, limit), "schedule", "admin@test");
      await backdate(db, name, "2020-01-01T00:00:00Z");
    }
    await settle(db);
    const startedYears = async (name: string) => (await firingsOf(db, name)).filter((f) => f.state === "started").map((f) => f.due_at.getUTCFullYear());
    expect(await startedYears("cu-none")).toEqual([]);
    expect(await startedYears("cu-latest")).toEqual([year]);
    expect(await startedYears("cu-all-3")).toEqual([year - 2, year - 1, year]);
    expect(await startedYears("cu-all-100")).toEqual(Array.from({ length: missedYears }, (_, i) => 2020 + i));
    const missed = async (name: string) => (await readSchedule(db.pool, name, null)).missed;
    expect([await missed("cu-none"), await missed("cu-latest"), await missed("cu-all-3"), await missed("cu-all-100")]).toEqual([missedYears, missedYears - 1, missedYears - 3, 0]);
    // Each moved on to next year's due time.
    expect((await readSchedule(db.pool, "cu-latest", null)).nextDueAt).toBe(`${year + 1}-01-01T00:00:00.000Z`);
  });

  test("none still starts a due time reached on time", async ({ db }) => {
    await createSchedule(db.pool, spec("cu-none-on-time", { catchUp: "none" }), "schedule", "admin@test");
    const { rows } = await db.pool.query<{ due: Date }>(`SELECT date_trunc('second', now()) - interval '2 seconds' AS due`);
    await backdate(db, "cu-none-on-time", rows[0]!.due.toISOString());
    // One pass, not settle(): the schedule falls due again every second, so a pass after a second
    // boundary would start the next due time too (the test failed so under load).
    expect(await scheduleRoom.settleDue(db.pool, 500)).toBe(1);
    const firings = await firingsOf(db, "cu-none-on-time");
    expect(firings.map((f) => f.state)).toEqual(["started"]);
    expect((await readSchedule(db.pool, "cu-none-on-time", null)).missed).toBeGreaterThanOrEqual(2);
    await deleteSchedule(db.pool, "cu-none-on-time", null, "admin@test");
  });
});

describe("overlap while the previous request runs", () => {
  // Five due times reached in one pass (catch-up all), with no worker: each request stays active.
  const five = (name: string, overlap: ScheduleSpec["overlap"]) => spec(name, { cron: "0 0 1 1 *", catchUp: "all", catchUpLimit: 5, overlap });

  test("allow starts each; skip starts the first and skips the rest; queue_one queues one and starts it when the running request ends", async ({ db }) => {
    for (const overlap of ["allow", "skip", "queue_one"] as const) {
      await createSchedule(db.pool, five(`ov-${overlap}`, overlap), "schedule", "admin@test");
      await backdate(db, `ov-${overlap}`, "2020-01-01T00:00:00Z");
    }
    await settle(db);
    const states = async (name: string) => (await firingsOf(db, name)).map((f) => f.state);
    expect(await states("ov-allow")).toEqual(["started", "started", "started", "started", "started"]);
    expect(await states("ov-skip")).toEqual(["started", "skipped", "skipped", "skipped", "skipped"]);
    expect(await states("ov-queue_one")).toEqual(["started", "queued", "skipped", "skipped", "skipped"]);

    // Nothing starts the queued one while the first request runs.
    expect(await settle(db)).toBe(0);
    const [running] = await firingsOf(db, "ov-queue_one");
    await cancelWorkflow(db.pool, running!.request_id!, "test: the previous request ends");
    expect(await settle(db)).toBe(1);
    const after = await firingsOf(db, "ov-queue_one");
    expect(after.map((f) => f.state)).toEqual(["started", "started", "skipped", "skipped", "skipped"]);
    expect(after[1]!.request_id).not.toBeNull();
    expect((await readSchedule(db.pool, "ov-queue_one", null)).lastFirings[3]).toMatchObject({ state: "started", requestStatus: "active" });
  });
});

describe("daylight saving on the database", () => {
  test("a daily 02:30 in Europe/Berlin fires once on the autumn day, and per dstGap on the spring day", async ({ db }) => {
    await createSchedule(db.pool, spec("dst-autumn", { cron: "30 2 25 10 *", timeZone: "Europe/Berlin" }), "schedule", "admin@test");
    await backdate(db, "dst-autumn", "2026-10-25T00:30:00Z");
    await createSchedule(db.pool, spec("dst-spring-shift", { cron: "30 2 29 3 *", timeZone: "Europe/Berlin", dstGap: "shift" }), "schedule", "admin@test");
    await backdate(db, "dst-spring-shift", "2026-03-29T01:00:00Z");
    await createSchedule(db.pool, spec("dst-spring-skip", { cron: "30 2 29 3 *", timeZone: "Europe/Berlin", dstGap: "skip" }), "schedule", "admin@test");
    await settle(db);
    expect((await firingsOf(db, "dst-autumn")).map((f) => f.due_at.toISOString())).toEqual(["2026-10-25T00:30:00.000Z"]);
    expect((await readSchedule(db.pool, "dst-autumn", null)).nextDueAt).toBe("2027-10-25T00:30:00.000Z");
    expect((await firingsOf(db, "dst-spring-shift")).map((f) => f.due_at.toISOString())).toEqual(["2026-03-29T01:00:00.000Z"]);
    // 29 March 2027 has its 02:30 (the clocks change on the 28th), so skip's next due time is then.
    expect((await readSchedule(db.pool, "dst-spring-skip", null)).nextDueAt).toBe("2027-03-29T00:30:00.000Z");
  });
});

describe("managing a schedule", () => {
  test("pause stops firing, resume starts from the next due time after now, delete removes it; each change audited", async ({ db }) => {
    await createSchedule(db.pool, spec("managed", { cron: "0 0 1 1 *" }), "schedule", "admin@test");
    const paused = await pauseSchedule(db.pool, "managed", null, "admin@test", "maintenance");
    expect(paused).toMatchObject({ state: "paused", nextDueAt: null, upcoming: [] });
    await pauseSchedule(db.pool, "managed", null, "admin@test");
    expect(await settle(db)).toBe(0);
    const resumed = await resumeSchedule(db.pool, "managed", null, "admin@test");
    const year = await dbYear(db);
    expect(resumed).toMatchObject({ state: "active", nextDueAt: `${year + 1}-01-01T00:00:00.000Z` });
    expect(resumed.upcoming).toHaveLength(5);
    await deleteSchedule(db.pool, "managed", null, "admin@test");
    await expect(readSchedule(db.pool, "managed", null)).rejects.toThrow(/schedule/);
    const { rows } = await db.pool.query<{ action: string }>(`SELECT action FROM audit_log WHERE subject_type = 'schedule' AND subject_id = 'managed' ORDER BY id`);
    // The second pause changed nothing and is not audited.
    expect(rows.map((r) => r.action)).toEqual(["schedule.created", "schedule.paused", "schedule.resumed", "schedule.deleted"]);
  });

  test("creating again with the same definition is the same schedule; another definition under the name is refused", async ({ db }) => {
    const first = await createSchedule(db.pool, spec("same", { input: { label: "x" } }), "app:shop", "app:shop");
    const again = await createSchedule(db.pool, spec("same", { input: { label: "x" } }), "app:shop", "app:shop");
    expect(again).toMatchObject({ created: false, schedule: { id: first.schedule.id } });
    await expect(createSchedule(db.pool, spec("same", { cron: "0 * * * *", input: { label: "x" } }), "app:shop", "app:shop")).rejects.toBeInstanceOf(ScheduleExistsError);
    // Another app does not see, pause or take it.
    await expect(readSchedule(db.pool, "same", "app:other")).rejects.toThrow(/not found|schedule/);
    await expect(pauseSchedule(db.pool, "same", "app:other", "app:other")).rejects.toThrow(/schedule/);
  });

  test("a cron that does not parse, a zone that does not exist, an unknown kind or version, an input the kind refuses: named, nothing written", async ({ db }) => {
    const count = async () => (await db.pool.query<{ n: number }>(`SELECT (SELECT count(*) FROM schedule)::int + (SELECT count(*) FROM audit_log WHERE subject_type = 'schedule')::int AS n`)).rows[0]!.n;
    const before = await count();
    const pathsOf = async (s: ScheduleSpec) => {
      const error = await createSchedule(db.pool, s, "schedule", "admin@test").then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidScheduleError);
      return (error as InvalidScheduleError).issues.map((issue) => issue.path);
    };
    expect(await pathsOf(spec("bad-cron", { cron: "61 * * * *" }))).toEqual(["cron"]);
    expect(await pathsOf(spec("bad-zone", { timeZone: "Mars/Olympus_Mons" }))).toEqual(["timeZone"]);
    expect(await pathsOf(spec("bad-kind", { kind: "no-such-kind" }))).toEqual(["kind"]);
    expect(await pathsOf(spec("bad-version", { version: 9 }))).toEqual(["version"]);
    expect(await pathsOf(spec("bad-input", { input: { label: 7 } }))).toEqual(["input.label"]);
    expect(await count()).toBe(before);
  });

  test("the input computed from the due time: each request's input carries its due time", async ({ db }) => {
    await createSchedule(db.pool, spec("computed", { cron: "0 0 1 1 *", catchUp: "latest", dueTimeField: "dueAt" }), "schedule", "admin@test");
    await backdate(db, "computed", "2026-01-01T00:00:00Z");
    await settle(db);
    const [firing] = await firingsOf(db, "computed");
    const { rows } = await db.pool.query<{ input: unknown }>(`SELECT input FROM workflow WHERE id = $1`, [firing!.request_id]);
    expect(rows[0]!.input).toEqual({ label: "computed", dueAt: firing!.due_at.toISOString() });
  });
});
