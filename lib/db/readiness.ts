/**
 * Waiting for a database server that was just started (PgBouncer under `npm start` and the
 * cluster bench): it is ready once it accepts a connection, which a listening port alone does
 * not show (PgBouncer listens before it can reach its database).
 */
import pg from "pg";

/** How long and on what to wait. */
export type WaitForDatabaseOptions = {
  /** Fail after this long. */
  readonly timeoutMs: number;
  /** Settles when the process serving `url` exits: no use waiting any longer. */
  readonly exited?: Promise<unknown>;
  /** Stop waiting when it answers true (the caller is shutting down). */
  readonly cancelled?: () => boolean;
};

const PROBE_TIMEOUT_MS = 2_000;
const RETRY_MS = 200;

/**
 * Resolves true once `url` accepts a connection, false when the server exits or the caller
 * cancels first; throws when `timeoutMs` passes first, naming the server (never the password).
 */
export async function waitForDatabase(url: string, { timeoutMs, exited, cancelled = () => false }: WaitForDatabaseOptions): Promise<boolean> {
  let gone = false;
  void exited?.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (!gone && !cancelled()) {
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    probe.on("error", () => undefined);
    const failure = await probe.connect().then(() => null, (error: Error) => error);
    await probe.end().catch(() => undefined);
    if (!failure) return true;
    if (Date.now() > deadline) throw new Error(`PostgreSQL at ${probe.host}:${probe.port} did not accept a connection within ${timeoutMs} ms (${failure.message})`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
  return false;
}
