/**
 * The synthetic destination's own database access: a plain pg.Pool it opens for itself and named
 * statements. It stands for someone else's system, so it borrows nothing from Fenceline's engine.
 */
import pg from "pg";

/** A named statement: node-postgres prepares it once per connection. */
export type Statement = { readonly name: string; readonly text: string };

export function openPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    application_name: "fenceline-destination",
    max: 5,
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: 5_000,
  });
  // Without these listeners a connection that fails (server restart, terminated backend) ends the
  // process; the pool discards such a connection by itself and the next statement reports it.
  pool.on("error", (error) => console.error(`[destination] idle connection failed: ${error.message}`));
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

export async function query<Row extends pg.QueryResultRow>(pool: pg.Pool, statement: Statement, values: unknown[]): Promise<Row[]> {
  const result = await pool.query<Row>({ name: statement.name, text: statement.text, values });
  return result.rows;
}
