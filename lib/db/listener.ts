/**
 * A LISTEN session: one connection of its own, held for as long as the listener is open, that
 * LISTENs on a set of channels. A notice sent while no session listens is lost, so when the
 * connection dies (a restart, a terminated backend, a failover) the listener reconnects with
 * backoff, LISTENs again and calls `onListening`, where its user catches up on what it may have
 * missed. Behind a pooler in transaction mode the pool must be a direct one (lib/db/pool.ts
 * sessionPoolOf), or LISTEN outlives its transaction on a server connection someone else gets.
 *
 * Only `pg` is imported here: the package's engine (the worker, `fenceline/testing`) uses it too,
 * and must not pull in lib/db/pool and its Prisma client.
 */
import type { Notification, Pool, PoolClient } from "pg";

/** What a listener listens on and whom it tells. */
export type ListenerOptions = {
  readonly channels: readonly string[];
  /** Each notice on one of `channels`. */
  readonly onNotification: (message: Notification) => void;
  /**
   * Called each time LISTEN takes effect on a new connection, the first included (`reconnected`
   * false): notices sent before it (before the first connection, or while the last one was lost)
   * never arrive, so this is where a user resyncs.
   */
  readonly onListening?: (event: { readonly reconnected: boolean }) => void;
  /** Delays between attempts to connect after a failed attempt or a lost connection; default 100 ms doubling to 5 s. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
};

/** A LISTEN session that keeps itself connected until closed. */
export type Listener = {
  /** Whether LISTEN is in effect on a live connection now. */
  readonly listening: boolean;
  /**
   * Connects on the first call; later, waits for an attempt in flight. Resolves either way: when
   * not listening (no connection, or waiting to retry) a caller falls back to reading the table.
   */
  ready(): Promise<void>;
  /** UNLISTENs, gives the connection back, and stops reconnecting. */
  close(): Promise<void>;
};

const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 5_000 };

/** A listener on a connection of `pool`; nothing connects until `ready()` is first called. */
export function createListener(pool: Pool, options: ListenerOptions): Listener {
  const { channels, onNotification, onListening } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  let session: { readonly connection: PoolClient; readonly detach: () => void } | null = null;
  let attempt: Promise<void> | null = null;
  let retry: NodeJS.Timeout | null = null;
  let delayMs = backoff.initialMs;
  let started = false;
  let listenedBefore = false;
  let closed = false;

  const notified = (message: Notification) => {
    if (channels.includes(message.channel)) onNotification(message);
  };

  const scheduleRetry = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, delayMs);
    // An open listener must not keep a process alive that has nothing else to do.
    retry.unref();
    delayMs = Math.min(delayMs * 2, backoff.maxMs);
  };

  const connect = (): Promise<void> =>
    (attempt ??= (async () => {
      let connection: PoolClient | null = null;
      let lost = false;
      const onLost = () => {
        if (lost) return;
        lost = true;
        if (connection) detach(connection);
        if (session?.connection === connection) session = null;
        connection?.release(true);
        scheduleRetry();
      };
      const detach = (of: PoolClient) => {
        of.off("notification", notified);
        of.off("error", onLost);
        of.off("end", onLost);
      };
      try {
        connection = await pool.connect();
        connection.on("notification", notified);
        connection.on("error", onLost);
        connection.on("end", onLost);
        for (const channel of channels) await connection.query(`LISTEN ${connection.escapeIdentifier(channel)}`);
      } catch {
        onLost();
        return;
      }
      if (lost) return;
      if (closed) {
        detach(connection);
        connection.release(true);
        return;
      }
      session = { connection, detach: () => detach(connection) };
      delayMs = backoff.initialMs;
      onListening?.({ reconnected: listenedBefore });
      listenedBefore = true;
    })().finally(() => {
      attempt = null;
    }));

  return {
    get listening() {
      return session !== null;
    },
    ready: () => {
      if (closed) return Promise.resolve();
      if (!started) {
        started = true;
        return connect();
      }
      return attempt ?? Promise.resolve();
    },
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = null;
      await attempt;
      const open = session;
      session = null;
      if (!open) return;
      const { connection, detach } = open;
      detach();
      await connection.query("UNLISTEN *").then(
        () => connection.release(),
        () => connection.release(true),
      );
    },
  };
}
