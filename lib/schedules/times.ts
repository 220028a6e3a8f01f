/**
 * A schedule's due times: a cron expression (5 fields, or 6 with seconds first) read on the wall
 * clock of a named IANA time zone, by croner (OCPS 1.4). Croner walks the zone's wall clock; two
 * rules are ours, because a due time is an identity (schedule, due time) and must mean one thing:
 *
 *  - Due times move forward on the wall clock too. When the clocks go back, the hour between is
 *    lived twice; a wall-clock time already due once in it is not due again (`0 * * * *` fires at
 *    the first 02:00 and not at the second).
 *  - A wall-clock time the clocks skip (spring forward) is due per the schedule's `dstGap`:
 *    `shift` (the default, as croner and cron do) at the first instant after the gap, `skip` not
 *    at all that day.
 */
import { Cron } from "croner";

/** What a schedule may do with a wall-clock time the clocks skip. */
export const DST_GAP_POLICIES = ["shift", "skip"] as const;
/** A wall-clock time the clocks skip (spring forward) is due at the first instant after the gap (`shift`), or not that day (`skip`). */
export type DstGap = (typeof DST_GAP_POLICIES)[number];

/** What the due times are computed from. */
export type Cadence = { readonly cron: string; readonly timeZone: string; readonly dstGap: DstGap };

/** Why `cron` does not parse as a cron expression, or null when it does. */
export function cronProblem(cron: string): string | null {
  if (cron.trim() === "" || cron.length > 200) return "must be a cron expression of 5 or 6 fields, at most 200 characters";
  try {
    new Cron(cron, { paused: true, mode: "5-or-6-parts" });
    return null;
  } catch (error) {
    return `does not parse as a cron expression: ${error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error)}`;
  }
}

/** Why `timeZone` names no IANA time zone this runtime knows, or null when it names one. */
export function timeZoneProblem(timeZone: string): string | null {
  if (timeZone.trim() === "" || timeZone.length > 64) return "must name an IANA time zone, such as Europe/Paris or UTC";
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return null;
  } catch {
    return `no time zone named ${JSON.stringify(timeZone)}: name an IANA time zone, such as Europe/Paris or UTC`;
  }
}

const walls = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time of `instant` in `timeZone`, as a sortable "YYYY-MM-DD HH:MM:SS". */
export function wallClockOf(instant: Date, timeZone: string): string {
  let format = walls.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    walls.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(instant).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** The most due times one call walks before it stops: bounds a pass after a long downtime. */
export const MAX_DUE_TIMES_WALKED = 100_000;

/** A cadence compiled once: its due times after an instant. */
export class DueTimes {
  private readonly cron: Cron;

  constructor(readonly cadence: Cadence) {
    const problem = cronProblem(cadence.cron) ?? timeZoneProblem(cadence.timeZone);
    if (problem) throw new Error(`DueTimes: ${problem}`);
    this.cron = new Cron(cadence.cron, { paused: true, timezone: cadence.timeZone, mode: "5-or-6-parts" });
  }

  /**
   * The first due time strictly after `after`, given the last due time `previous` (null for none):
   * later on the wall clock than `previous`, and (dstGap skip) not shifted out of a gap.
   */
  next(after: Date, previous: Date | null): Date | null {
    const floor = previous ? wallClockOf(previous, this.cadence.timeZone) : null;
    let cursor = after;
    for (let walked = 0; walked < MAX_DUE_TIMES_WALKED; walked += 1) {
      const candidate = this.cron.nextRun(cursor);
      if (!candidate) return null;
      cursor = candidate;
      if (floor !== null && wallClockOf(candidate, this.cadence.timeZone) <= floor) continue;
      // croner moves a wall-clock time the clocks skip to the first instant after the gap, where
      // the pattern itself does not match: that is the shifted firing.
      if (this.cadence.dstGap === "skip" && !this.cron.match(candidate)) continue;
      return candidate;
    }
    return null;
  }

  /** Up to `count` due times after `after`, each after the one before. */
  upcoming(after: Date, previous: Date | null, count: number): Date[] {
    const times: Date[] = [];
    let cursor = after;
    let last = previous;
    while (times.length < count) {
      const due = this.next(cursor, last);
      if (!due) break;
      times.push(due);
      cursor = due;
      last = due;
    }
    return times;
  }

  /**
   * The due times from `first` (itself a due time) up to `now`, walking at most `bound` of them:
   * the latest `keep` of them, and how many there were in all (`walked`), so that a long downtime
   * costs one bounded walk. `next` is the first due time not walked: after `now`, or (when the
   * walk stopped at `bound`, `exhausted`) the one the next walk starts from.
   */
  dueUpTo(first: Date, previous: Date | null, now: Date, keep: number, bound = MAX_DUE_TIMES_WALKED): { latest: Date[]; walked: number; exhausted: boolean; next: Date | null } {
    const latest: Date[] = [];
    let walked = 0;
    let due: Date | null = first;
    let last = previous;
    while (due && due.getTime() <= now.getTime()) {
      if (walked >= bound) return { latest, walked, exhausted: true, next: due };
      walked += 1;
      latest.push(due);
      if (latest.length > keep) latest.shift();
      last = due;
      due = this.next(due, last);
    }
    return { latest, walked, exhausted: false, next: due };
  }
}
