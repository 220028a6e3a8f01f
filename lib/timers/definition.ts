/**
 * Timer steps as an adopter writes them: wait a duration from when the step became ready, or
 * until a time computed from the input and earlier results, optionally a wall-clock time in a
 * named time zone. The worker resolves the step's choice to an instant or a duration (the
 * request); the database clock does the waiting (lib/timers/room.ts).
 */
import { TZDate } from "@date-fns/tz";
import type { WaitContext } from "@/lib/definitions/context";

/** The longest a timer may wait: ten years, in milliseconds. */
export const MAX_TIMER_MS = 10 * 366 * 24 * 3_600_000;

/** A wall-clock time in a named IANA time zone: `{ local: "2026-12-03T09:00", timeZone: "Europe/Paris" }`. */
export type WallClockTime = { readonly local: string; readonly timeZone: string };

/** When a timer step fires: after a duration, or at a time. */
export type TimerOptions<Ctx = WaitContext> =
  | {
      /** Milliseconds from when the step became ready (its last dependency's receipt, or the request's creation). */
      readonly afterMs: number | ((ctx: Ctx) => number | Promise<number>);
    }
  | {
      /** The time to fire at: a Date, an ISO 8601 string with its offset, or a wall-clock time in a zone. */
      readonly until: (ctx: Ctx) => Date | string | WallClockTime | Promise<Date | string | WallClockTime>;
    };

/** What a timer step's dependants read of it (`ctx.results.<step>`): when it was due and when it fired, ISO 8601 on the database clock. */
export type TimerResult = { readonly dueAt: string; readonly firedAt: string };

/** What a timer's attempt asks its room for (lib/timers/room.ts checks it again on arrival). */
export type TimerRequest = { readonly at: string; readonly timeZone?: string } | { readonly afterMs: number };

/** The problems of a timer's options, as `defineWorkflow` reports them. */
export function timerProblems(where: string, options: unknown): string[] {
  if (options === null || typeof options !== "object") return [`${where}: timer must be { afterMs } or { until }`];
  const timer = options as Record<string, unknown>;
  const given = ["afterMs", "until"].filter((key) => timer[key] !== undefined);
  if (given.length !== 1) return [`${where}: timer takes exactly one of afterMs or until`];
  if (typeof timer.afterMs === "number" && !validDuration(timer.afterMs)) {
    return [`${where}: timer afterMs must be an integer from 0 to ${MAX_TIMER_MS} (ten years), got ${timer.afterMs}`];
  }
  if (timer.afterMs !== undefined && typeof timer.afterMs !== "number" && typeof timer.afterMs !== "function") return [`${where}: timer afterMs must be a number or a function`];
  if (timer.until !== undefined && typeof timer.until !== "function") return [`${where}: timer until must be a function of the step's context`];
  return [];
}

const validDuration = (ms: number): boolean => Number.isInteger(ms) && ms >= 0 && ms <= MAX_TIMER_MS;

/** Works out a timer step's request from its options and the step's context; throws naming what is wrong. */
export async function timerRequestOf(options: TimerOptions, ctx: WaitContext): Promise<TimerRequest> {
  if ("afterMs" in options) {
    const afterMs = typeof options.afterMs === "function" ? await options.afterMs(ctx) : options.afterMs;
    if (typeof afterMs !== "number" || !validDuration(afterMs)) throw new Error(`timer afterMs must be an integer from 0 to ${MAX_TIMER_MS}, got ${String(afterMs)}`);
    return { afterMs };
  }
  const until = await options.until(ctx);
  if (until instanceof Date) {
    if (Number.isNaN(until.getTime())) throw new Error("timer until returned an invalid Date");
    return { at: until.toISOString() };
  }
  if (typeof until === "string") {
    if (!/(Z|[+-]\d{2}:\d{2})$/i.test(until) || Number.isNaN(Date.parse(until))) {
      throw new Error(`timer until returned ${JSON.stringify(until)}: an ISO 8601 time with its offset (or Z) is needed, or { local, timeZone }`);
    }
    return { at: new Date(until).toISOString() };
  }
  if (until && typeof until === "object" && typeof until.local === "string" && typeof until.timeZone === "string") {
    return { at: instantOf(until).toISOString(), timeZone: until.timeZone };
  }
  throw new Error("timer until must return a Date, an ISO 8601 string with its offset, or { local, timeZone }");
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** Whether `timeZone` is an IANA time zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The instant a wall-clock time names in its zone. Around a daylight-saving change it reads as
 * people mean it (Temporal's "compatible" rule): a time that happens twice (clocks go back) is
 * the first of the two; a time that never happens (clocks go forward) is moved forward by the
 * gap, so 02:30 on a spring-forward night is 03:30.
 */
export function instantOf(time: WallClockTime): Date {
  const match = LOCAL.exec(time.local);
  if (!match) throw new Error(`a wall-clock time is YYYY-MM-DDTHH:MM[:SS] without an offset, got ${JSON.stringify(time.local)}`);
  if (!isTimeZone(time.timeZone)) throw new Error(`unknown time zone ${JSON.stringify(time.timeZone)}`);
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    throw new Error(`${time.local} is not a time of the calendar`);
  }
  // The library moves a time that never happens forward, and takes the second of a time that
  // happens twice; the first lies one offset change earlier, when it shows the same wall time.
  const instant = new TZDate(year, month - 1, day, hour, minute, second, time.timeZone).getTime();
  const offsetChangeMs = (new TZDate(instant + 43_200_000, time.timeZone).getTimezoneOffset() - new TZDate(instant - 43_200_000, time.timeZone).getTimezoneOffset()) * 60_000;
  if (offsetChangeMs > 0) {
    const earlier = new TZDate(instant - offsetChangeMs, time.timeZone);
    if (earlier.getDate() === day && earlier.getHours() === hour && earlier.getMinutes() === minute) return new Date(instant - offsetChangeMs);
  }
  return new Date(instant);
}
