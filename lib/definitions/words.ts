/**
 * Words that belong to the engine and must never reach an end user. Milestones and titles are
 * checked against them when a workflow is defined, and the end-user projection's own sentences
 * by a test.
 */
export const ENGINE_WORDS = ["lease", "fencing", "attempt", "worker", "adapter", "receipt", "idempotency"] as const;

/** The engine words `text` contains, as whole-word prefixes ("leases", "attempted" count). */
export function engineWordsIn(text: string): string[] {
  const lower = text.toLowerCase();
  return ENGINE_WORDS.filter((word) => new RegExp(`\\b${word}`).test(lower));
}
