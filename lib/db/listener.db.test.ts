/**
 * The LISTEN session (listener.ts) against real PostgreSQL: its backend terminated under it, it
 * reconnects, LISTENs again and calls its resync hook, and a notice sent after that arrives; a
 * server that does not answer leaves it not listening, without an error.
 */
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { expect } from "vitest";
import { freePort } from "@/lib/net/free-port";
import { createListener } from "./listener";
import { createPool } from "./pool";
import { dbTest as test } from "./test-database";

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The backend of the one session `applicationName` has open in this database, if any. */
async function backendOf(pool: pg.Pool, applicationName: string): Promise<number | null> {
  const { rows } = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
    [applicationName],
  );
  return rows[0]?.pid ?? null;
}

test("a listener whose backend is terminated reconnects, listens again, resyncs, and then receives notices", async ({ db }) => {
  const applicationName = `listener-${randomBytes(3).toString("hex")}`;
  const listenPool = createPool(db.url, { applicationName, max: 1 });
  const channel = "fenceline_test_listener";
  const notices: string[] = [];
  const resyncs: boolean[] = [];
  const listener = createListener(listenPool, {
    channels: [channel, "fenceline_test_other"],
    onNotification: (message) => notices.push(`${message.channel}:${message.payload}`),
    onListening: ({ reconnected }) => resyncs.push(reconnected),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  try {
    expect(listener.listening).toBe(false);
    await listener.ready();
    expect(listener.listening).toBe(true);
    expect(resyncs).toEqual([false]);
    await db.pool.query("SELECT pg_notify($1, 'before'), pg_notify('fenceline_test_unheard', 'x')", [channel]);
    await until(() => notices.length === 1, "the first notice");

    const first = await backendOf(db.pool, applicationName);
    expect(first).not.toBeNull();
    await db.pool.query("SELECT pg_terminate_backend($1)", [first]);
    await until(() => resyncs.length === 2, "the resync after reconnecting");
    expect(resyncs).toEqual([false, true]);
    expect(listener.listening).toBe(true);
    const second = await backendOf(db.pool, applicationName);
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);

    await db.pool.query("SELECT pg_notify($1, 'after'), pg_notify('fenceline_test_other', 'too')", [channel]);
    await until(() => notices.length === 3, "the notices after reconnecting");
    // Only the subscribed channels, each notice once.
    expect(notices).toEqual([`${channel}:before`, `${channel}:after`, "fenceline_test_other:too"]);

    await listener.close();
    expect(listener.listening).toBe(false);
    // Closing gives the connection back to its pool, not listening any more.
    expect(listenPool.idleCount).toBe(1);
    const { rows } = await listenPool.query<{ channels: string[] }>("SELECT array(SELECT pg_listening_channels()) AS channels");
    expect(rows[0]!.channels).toEqual([]);
  } finally {
    await listener.close();
    await listenPool.end();
  }
});

test("a listener on a server that does not answer is ready without listening, and closes", async () => {
  const unreachable = createPool(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`, { applicationName: "listener-unreachable", schema: null });
  const listener = createListener(unreachable, { channels: ["fenceline_test_listener"], onNotification: () => undefined });
  try {
    await listener.ready();
    expect(listener.listening).toBe(false);
  } finally {
    await listener.close();
    await unreachable.end();
  }
});
