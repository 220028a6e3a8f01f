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
