import type { Pool, PoolClient, QueryResultRow } from "pg";
import type { PrimaryOnly, StaffReadable } from "@/lib/db/read-pool";

/**
 * Anything that runs a query on the primary: a pool, or a client inside a transaction. Never a
 * ReadPool (lib/db/read-pool.ts): what the engine decides it reads from the primary.
 */
export type Queryable = Pick<Pool | PoolClient, "query"> & PrimaryOnly;

/**
 * A named statement. Naming makes node-postgres prepare it once per connection, so the
 * coordination hot paths are parsed once rather than on every call. PostgreSQL still plans the
 * first five executions for their values and keeps a generic plan only when it costs out no
 * worse; a parameter that moves the estimate a lot (a LIMIT) belongs in the text instead.
 */
export type NamedSql = { readonly name: string; readonly text: string };

/** Runs a named statement; on a staff read the handle may be a ReadPool. */
export async function run<Row extends QueryResultRow>(
  db: StaffReadable,
  statement: NamedSql,
  values: unknown[],
): Promise<Row[]> {
  const result = await db.query<Row>({ name: statement.name, text: statement.text, values });
  return result.rows;
}

/**
 * Runs `work` in one short transaction on a client of its own. When the connection is killed
 * mid-transaction (server restart, pg_terminate_backend), the error is noted here, the statement
 * in flight fails, no ROLLBACK is tried on the dead connection, and the client goes back to the
 * pool marked broken, so it is destroyed, not reused.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    if (!broken) await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
