/**
 * Integer settings from the environment. A value that is set but not an integer in range stops
 * the process with a message naming the variable, instead of turning into NaN further on.
 */
export function integerFromEnv(name: string, fallback: number, { min = 1, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}
