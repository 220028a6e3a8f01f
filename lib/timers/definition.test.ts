/**
 * A timer's wall-clock time names one instant in its zone, read as people mean it around a
 * daylight-saving change: a time that happens twice is the first, one that never happens moves
 * forward by the gap. Bad zones and dates are refused, naming what is wrong.
 */
import { describe, expect, test } from "vitest";
import { instantOf, timerProblems, timerRequestOf } from "./definition";
import type { WaitContext } from "@/lib/definitions/context";

const ctx = { input: { zone: "Europe/Paris" }, results: {} } as unknown as WaitContext;

describe("a wall-clock time in a zone", () => {
  test("an ordinary morning in Paris is 08:00 UTC in winter", () => {
    expect(instantOf({ local: "2026-12-03T09:00", timeZone: "Europe/Paris" }).toISOString()).toBe("2026-12-03T08:00:00.000Z");
  });
  test("a time that happens twice (clocks go back) is the first of the two", () => {
    expect(instantOf({ local: "2026-10-25T02:30", timeZone: "Europe/Paris" }).toISOString()).toBe("2026-10-25T00:30:00.000Z");
  });
  test("a time that never happens (clocks go forward) moves forward by the gap", () => {
    expect(instantOf({ local: "2026-03-29T02:30", timeZone: "Europe/Paris" }).toISOString()).toBe("2026-03-29T01:30:00.000Z");
  });
  test("New York's fall-back hour is its first occurrence too", () => {
    expect(instantOf({ local: "2026-11-01T01:30", timeZone: "America/New_York" }).toISOString()).toBe("2026-11-01T05:30:00.000Z");
  });
  test("an unknown zone and an impossible date are refused", () => {
    expect(() => instantOf({ local: "2026-12-03T09:00", timeZone: "Mars/Base" })).toThrow(/unknown time zone "Mars\/Base"/);
    expect(() => instantOf({ local: "2026-02-30T09:00", timeZone: "Europe/Paris" })).toThrow(/not a time of the calendar/);
    expect(() => instantOf({ local: "2026-12-03 09:00", timeZone: "Europe/Paris" })).toThrow(/YYYY-MM-DDTHH:MM/);
  });
});

describe("a timer step's request", () => {
  test("a duration, fixed or computed, stays a duration (counted by the database from when the step became ready)", async () => {
    expect(await timerRequestOf({ afterMs: 5_000 }, ctx)).toEqual({ afterMs: 5_000 });
    expect(await timerRequestOf({ afterMs: () => 7 }, ctx)).toEqual({ afterMs: 7 });
  });
  test("a time becomes an instant; a wall-clock time keeps its zone for the views", async () => {
    expect(await timerRequestOf({ until: () => new Date("2026-12-03T08:00:00Z") }, ctx)).toEqual({ at: "2026-12-03T08:00:00.000Z" });
    expect(await timerRequestOf({ until: () => "2026-12-03T09:00:00+01:00" }, ctx)).toEqual({ at: "2026-12-03T08:00:00.000Z" });
    expect(await timerRequestOf({ until: (c) => ({ local: "2026-12-03T09:00", timeZone: (c.input as { zone: string }).zone }) }, ctx)).toEqual({
      at: "2026-12-03T08:00:00.000Z",
      timeZone: "Europe/Paris",
    });
  });
  test("a time without its offset, a negative duration and a bad Date are refused", async () => {
    await expect(timerRequestOf({ until: () => "2026-12-03T09:00:00" }, ctx)).rejects.toThrow(/with its offset/);
    await expect(timerRequestOf({ afterMs: () => -1 }, ctx)).rejects.toThrow(/integer from 0/);
    await expect(timerRequestOf({ until: () => new Date("nope") }, ctx)).rejects.toThrow(/invalid Date/);
  });
  test("definitions with both, neither, or a bad duration are named", () => {
    expect(timerProblems("step t", { afterMs: 1, until: () => new Date() })).toEqual(["step t: timer takes exactly one of afterMs or until"]);
    expect(timerProblems("step t", {})).toEqual(["step t: timer takes exactly one of afterMs or until"]);
    expect(timerProblems("step t", { afterMs: 1.5 })[0]).toMatch(/integer from 0/);
    expect(timerProblems("step t", { afterMs: 1000 })).toEqual([]);
  });
});
