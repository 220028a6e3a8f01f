/**
 * A record read in parts, seen at one moment. Each statement on a pool takes a snapshot of its
 * own, so reads sent side by side straddle whatever commits between them: a step still leased
 * beside the receipt that completed it, a receipt without its attempt. Inside `readSnapshot`
 * every statement runs on one connection in one REPEATABLE READ READ ONLY transaction, so each
 * commit is seen wholly or not at all. A hot standby takes such a transaction too, so a ReadPool
 * on a replica reads snapshots as the primary does.
 */
import type pg from "pg";
import type { PrimaryOnly, ReadPool, StaffSnapshot } from "./read-pool-types";

/** What a snapshot is read from: the primary's pool, a ReadPool, or a snapshot already open (read inside it). */
export type SnapshotSource = (pg.Pool & PrimaryOnly) | ReadPool | StaffSnapshot;

/** The snapshots open now; a reader handed one reads inside it instead of opening another. */
const open = new WeakSet<object>();

/**
 * Runs `work` on one snapshot of `source`'s database and returns what it returns. Statements
 * `work` sends together are taken one after another (one connection runs one at a time).
 */
export async function readSnapshot<T>(source: SnapshotSource, work: (snapshot: StaffSnapshot) => Promise<T>): Promise<T> {
  if (open.has(source)) return work(source as StaffSnapshot);
  // A ReadPool is a pg.Pool seen through a narrower type (lib/db/read-pool.ts): it can lend a connection.
  const client = await (source as unknown as pg.Pool).connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  const inTurn = (text: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> => {
    // A read that outlives its snapshot would run on a connection handed back to the pool.
    if (closed) return Promise.reject(new Error("this snapshot has ended: read inside readSnapshot's work"));
    const next = queue.then(() => client.query(text as pg.QueryConfig, values));
    queue = next.catch(() => undefined);
    return next;
  };
  const snapshot = { query: inTurn } as unknown as StaffSnapshot;
  try {
    await inTurn("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    open.add(snapshot);
    const result = await work(snapshot);
    await inTurn("COMMIT");
    return result;
  } catch (error) {
    // After the statements `work` left running, so the connection goes back idle.
    if (!broken) await inTurn("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    closed = true;
    open.delete(snapshot);
    client.off("error", onError);
    client.release(broken);
  }
}
