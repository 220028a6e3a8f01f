/**
 * A schedule's due times on a zone's wall clock (invariant 13's "which due times"): a local time
 * the clocks live twice is due once, at its first occurrence; one the clocks skip is due at the
 * first instant after the gap (`shift`) or not at all (`skip`); due times only move forward; a
 * cron that does not parse and a zone that does not exist are named, not guessed.
 */
import { describe, expect, test } from "vitest";
import { cronProblem, DueTimes, timeZoneProblem, wallClockOf } from "./times";

const iso = (dates: readonly Date[]) => dates.map((date) => date.toISOString());
const berlin = (cron: string, dstGap: "shift" | "skip" = "shift") => new DueTimes({ cron, timeZone: "Europe/Berlin", dstGap });

describe("autumn: the clocks go back (Europe/Berlin, 25 October 2026, 03:00 CEST → 02:00 CET)", () => {
  test("a daily 02:30 is due once that day, at the first 02:30 (CEST)", () => {
    expect(iso(berlin("30 2 * * *").upcoming(new Date("2026-10-24T12:00:00Z"), null, 3))).toEqual([
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
      "2026-10-27T01:30:00.000Z",
    ]);
  });

  test("an hourly schedule is due at 02:00 once: the hour lived twice does not fire twice", () => {
    const due = berlin("0 * * * *").upcoming(new Date("2026-10-24T23:30:00Z"), null, 4);
    expect(iso(due)).toEqual(["2026-10-25T00:00:00.000Z", "2026-10-25T02:00:00.000Z", "2026-10-25T03:00:00.000Z", "2026-10-25T04:00:00.000Z"]);
    expect(due.map((d) => wallClockOf(d, "Europe/Berlin"))).toEqual(["2026-10-25 02:00:00", "2026-10-25 03:00:00", "2026-10-25 04:00:00", "2026-10-25 05:00:00"]);
  });

  test("a schedule every 30 minutes skips the repeated 02:00 and 02:30, and its due times keep moving forward", () => {
    const due = berlin("*/30 * * * *").upcoming(new Date("2026-10-24T23:45:00Z"), null, 4);
    expect(due.map((d) => wallClockOf(d, "Europe/Berlin"))).toEqual(["2026-10-25 02:00:00", "2026-10-25 02:30:00", "2026-10-25 03:00:00", "2026-10-25 03:30:00"]);
    expect(iso(due)).toEqual(["2026-10-25T00:00:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-25T02:00:00.000Z", "2026-10-25T02:30:00.000Z"]);
  });

  test("the previous due time carries across passes: asked from inside the repeated hour, 02:30 is not due again", () => {
    // A keeper that fired 02:30 CEST and looks again at 02:10 CET.
    expect(berlin("30 2 * * *").next(new Date("2026-10-25T01:10:00Z"), new Date("2026-10-25T00:30:00Z"))?.toISOString()).toBe("2026-10-26T01:30:00.000Z");
  });
});

describe("spring: the clocks go forward (Europe/Berlin, 29 March 2026, 02:00 CET → 03:00 CEST)", () => {
  test("dstGap shift: a daily 02:30, which does not happen that day, is due at 03:00 CEST", () => {
    expect(iso(berlin("30 2 * * *", "shift").upcoming(new Date("2026-03-28T12:00:00Z"), null, 2))).toEqual(["2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  test("dstGap skip: a daily 02:30 is not due that day at all", () => {
    expect(iso(berlin("30 2 * * *", "skip").upcoming(new Date("2026-03-28T12:00:00Z"), null, 2))).toEqual(["2026-03-30T00:30:00.000Z", "2026-03-31T00:30:00.000Z"]);
  });

  test("an hourly schedule goes from 01:00 CET to 03:00 CEST, once each", () => {
    const due = berlin("0 * * * *", "skip").upcoming(new Date("2026-03-28T23:30:00Z"), null, 3);
    expect(iso(due)).toEqual(["2026-03-29T00:00:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00.000Z"]);
  });
});

describe("walking the due times missed during a downtime", () => {
  test("keeps the latest, counts all, and stops at its bound", () => {
    const times = new DueTimes({ cron: "0 0 1 * *", timeZone: "UTC", dstGap: "shift" });
    const walk = times.dueUpTo(new Date("2026-01-01T00:00:00Z"), null, new Date("2026-06-15T00:00:00Z"), 2);
    expect(walk).toMatchObject({ walked: 6, exhausted: false });
    expect(iso(walk.latest)).toEqual(["2026-05-01T00:00:00.000Z", "2026-06-01T00:00:00.000Z"]);
    expect(walk.next?.toISOString()).toBe("2026-07-01T00:00:00.000Z");
    const bounded = times.dueUpTo(new Date("2026-01-01T00:00:00Z"), null, new Date("2026-06-15T00:00:00Z"), 2, 4);
    expect(bounded).toMatchObject({ walked: 4, exhausted: true });
    expect(bounded.next?.toISOString()).toBe("2026-05-01T00:00:00.000Z");
  });
});

describe("bad input is named", () => {
  test("a cron that does not parse, with 7 fields, or empty", () => {
    expect(cronProblem("61 * * * *")).toMatch(/minute/);
    expect(cronProblem("* * * * * * *")).toMatch(/5 or 6/);
    expect(cronProblem("")).toMatch(/cron expression/);
    expect(cronProblem("*/5 * * * * *")).toBeNull();
  });

  test("a time zone that does not exist", () => {
    expect(timeZoneProblem("Mars/Olympus_Mons")).toMatch(/no time zone named/);
    expect(timeZoneProblem("Europe/Paris")).toBeNull();
    expect(timeZoneProblem("UTC")).toBeNull();
  });
});
