import type { Pool, PoolClient, QueryResultRow } from "pg";
import type { PrimaryOnly, StaffReadable } from "@/lib/db/read-pool-types";

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

/**
 * Whether statements are prepared by name: yes unless FENCELINE_DB_PREPARED=off. A pooler in
 * transaction mode without prepared-statement tracking (PgBouncer before 1.21) hands each
 * transaction whichever server connection is free, where the name was never prepared; off sends
 * every statement unnamed, parsed and planned on each call (decision 016 has the cost).
 */
export function preparedStatements(env: NodeJS.ProcessEnv = process.env): boolean {
  const setting = env.FENCELINE_DB_PREPARED ?? "on";
  if (setting !== "on" && setting !== "off") throw new Error(`FENCELINE_DB_PREPARED must be "on" or "off", got "${setting}"`);
  return setting === "on";
}

const prepared = preparedStatements();

/** The query node-postgres runs for `statement`: named unless FENCELINE_DB_PREPARED=off. */
export function queryOf(statement: NamedSql, values: unknown[]): { name?: string; text: string; values: unknown[] } {
  return prepared ? { name: statement.name, text: statement.text, values } : { text: statement.text, values };
}

/** Runs a named statement; on a staff read the handle may be a ReadPool. */
export async function run<Row extends QueryResultRow>(
  db: StaffReadable,
  statement: NamedSql,
  values: unknown[],
): Promise<Row[]> {
  const result = await db.query<Row>(queryOf(statement, values));
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
