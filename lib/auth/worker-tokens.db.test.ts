/**
 * The worker-token cache across a lost revocation listener: a revocation whose notice was sent
 * while no connection listened (here: marked in the table with no notice at all) must not leave
 * the token cached once the listener is back.
 */
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { expect, onTestFinished } from "vitest";
import { createPool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { createWorkerToken, workerTokenCache } from "./worker-tokens";

const revokeSilently = (db: { pool: pg.Pool }, id: string) =>
  db.pool.query("UPDATE worker_token SET revoked_at = now(), revoked_by = 'psql' WHERE id = $1::bigint", [id]);

test("a revocation missed while the listener was down refuses the token once it listens again; caching then resumes", async ({ db }) => {
  const applicationName = `token-listener-${randomBytes(3).toString("hex")}`;
  const listenPool = createPool(db.url, { applicationName, max: 1 });
  const cache = workerTokenCache(db.pool, listenPool);
  onTestFinished(async () => {
    await cache.close();
    await listenPool.end();
  });
  const listenerBackend = async () =>
    (
      await db.pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query LIKE 'LISTEN %' AND state = 'idle'",
        [applicationName],
      )
    ).rows[0]?.pid;

  const missed = await createWorkerToken(db.pool, "missed", "admin@test");
  expect(await cache.identify(missed.token)).toMatchObject({ tokenId: missed.id, workerName: "missed" });
  await revokeSilently(db, missed.id);
  // Cached: no notice came, so the identity still answers.
  expect(await cache.identify(missed.token)).toMatchObject({ tokenId: missed.id });

  const before = await listenerBackend();
  expect(before).toBeDefined();
  await db.pool.query("SELECT pg_terminate_backend($1)", [before]);
  await expect.poll(async () => [undefined, before].includes(await listenerBackend()), { timeout: 10_000, interval: 20 }).toBe(false);
  // The reply to LISTEN reaches the listener just after the server shows the statement.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await cache.identify(missed.token)).toBeNull();

  const fresh = await createWorkerToken(db.pool, "fresh", "admin@test");
  expect(await cache.identify(fresh.token)).toMatchObject({ tokenId: fresh.id });
  await revokeSilently(db, fresh.id);
  expect(await cache.identify(fresh.token)).toMatchObject({ tokenId: fresh.id });
});
