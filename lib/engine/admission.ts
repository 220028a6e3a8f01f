/**
 * Admission under a kind's limit on steps in flight per concurrency key. The database admits a
 * step as it becomes ready, or queues it behind its key, and admits the next when one of the
 * key's steps ends (migration 20261207100000_fair_share); this is the pass that catches what those
 * could not see, run with each recovery pass.
 */
import { run, type Queryable } from "./db";
import * as sql from "./sql/admission";

/** Keys one pass looks at, at most; the next pass goes on from the last. */
export const ADMISSION_KEYS_PER_PASS = 100;
/** Steps one pass admits per key and kind, at most. */
const ADMITTED_PER_KEY = 100;

/**
 * A sweep over the keys with queued steps, a bounded batch per call, going round them in key
 * order across calls. Returns how many steps each call admitted.
 */
export function queuedAdmission(db: Queryable, keysPerPass = ADMISSION_KEYS_PER_PASS): () => Promise<number> {
  let after = "";
  return async () => {
    const rows = await run<{ key: string; kind: string; admitted: number }>(db, sql.admitQueuedSteps, [after, keysPerPass, ADMITTED_PER_KEY]);
    const keys = new Set(rows.map((row) => row.key));
    // A short batch reached the last key: start from the first again.
    after = keys.size < keysPerPass ? "" : rows.at(-1)!.key;
    return rows.reduce((sum, row) => sum + row.admitted, 0);
  };
}
