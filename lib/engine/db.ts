import type { Pool, PoolClient, QueryResultRow } from "pg";

/** Anything that runs a query: a pool, or a client inside a transaction. */
export type Queryable = Pick<Pool | PoolClient, "query">;

/**
 * A named statement. Naming makes node-postgres prepare it once per connection, so the
 * coordination hot paths are parsed and planned once rather than on every call.
 */
export type NamedSql = { readonly name: string; readonly text: string };

export async function run<Row extends QueryResultRow>(
  db: Queryable,
  statement: NamedSql,
  values: unknown[],
): Promise<Row[]> {
  const result = await db.query<Row>({ name: statement.name, text: statement.text, values });
  return result.rows;
}

/** Runs `work` in one short transaction on a client of its own. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
