/**
 * Settings from the environment. A value that is set but malformed stops the process with a
 * message naming the variable, instead of turning into NaN further on.
 */

/**
 * A setting the person running a command must fix (missing, malformed, or pointing at something
 * that is not there). Commands report it as its message alone, without a stack: it is not a bug.
 */
export class SettingError extends Error {
  override readonly name = "SettingError";
}

export function integerFromEnv(name: string, fallback: number, { min = 1, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new SettingError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** The variable's value; `why` says when it is needed, for the message when it is unset. */
export function requiredEnv(name: string, why: string): string {
  const value = process.env[name];
  if (!value) throw new SettingError(`${name} is not set (${why})`);
  return value;
}

/**
 * The retention job's schedule for the coordinators (lib/engine/retention.ts runScheduledRetention):
 * FENCELINE_RETENTION_EVERY_HOURS (default 24; 0 turns the schedule off, for a deployment that
 * runs `npm run retention` from cron) and FENCELINE_RETENTION_DAYS (default 30). Null when off.
 */
export function retentionScheduleFromEnv(): { everyMs: number; keepMs: number } | null {
  const hours = integerFromEnv("FENCELINE_RETENTION_EVERY_HOURS", 24, { min: 0 });
  if (hours === 0) return null;
  return { everyMs: hours * 3_600_000, keepMs: integerFromEnv("FENCELINE_RETENTION_DAYS", 30, { min: 1 }) * 86_400_000 };
}
