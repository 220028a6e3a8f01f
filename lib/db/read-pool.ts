/**
 * Staff reads off the primary (decision 017). DATABASE_READ_URL may name a replica (a streaming
 * standby, possibly lagging); `readPool()` connects there, or is the primary's pool when unset.
 * Only staff views read through it: engineer views, metrics, the review queue, the overview.
 *
 * What decides a lease, a claim, a fence, a recovery or a review resolution, and every write,
 * must read the primary. That is kept by the types, not by care: a ReadPool carries a mark that
 * the engine's `Queryable` (lib/engine/db.ts) refuses, and it has no `connect`, so it cannot open
 * the transactions the engine runs in. Staff reads take a `StaffReadable`: either pool.
 */
import { createPool, pool, processName, type PoolOptions } from "./pool";
import type { ReadPool } from "./read-pool-types";

/** A ReadPool on `connectionString` (a replica's, or the primary's). */
export function createReadPool(connectionString: string, options: PoolOptions): ReadPool {
  return createPool(connectionString, options) as unknown as ReadPool;
}

// On globalThis, as pool() is, so `next dev` reloads reuse it.
const handles = globalThis as typeof globalThis & { fencelineReadPool?: ReadPool };

/**
 * This process's ReadPool on DATABASE_READ_URL, created on first use. Without a replica it is
 * the primary's pool(), seen through the narrower type, so no second set of connections opens.
 */
export function readPool(): ReadPool {
  handles.fencelineReadPool ??= process.env.DATABASE_READ_URL
    ? createReadPool(readDatabaseUrl(), { applicationName: `${processName()}:read` })
    : (pool() as unknown as ReadPool);
  return handles.fencelineReadPool;
}

/** DATABASE_READ_URL, or DATABASE_URL when no replica is named. */
export function readDatabaseUrl(): string {
  const url = process.env.DATABASE_READ_URL || process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set (npm start sets it for the processes it runs)");
  return url;
}
