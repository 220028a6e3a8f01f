/** The coordinator conformance suite over the direct database transport, and its LISTEN's reconnect. */
import { randomBytes } from "node:crypto";
import { expect, onTestFinished } from "vitest";
import { createPool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { coordinatorConformance } from "./coordinator.conformance";
import { directCoordinator } from "./direct-coordinator";

coordinatorConformance("direct", (db) => directCoordinator(db.pool));

test("a wait whose listener connection is lost ends once the listener is back, since a wake-up may have been missed meanwhile", async ({ db }) => {
  const applicationName = `wake-ups-${randomBytes(3).toString("hex")}`;
  const listenPool = createPool(db.url, { applicationName, max: 1 });
  const coordinator = directCoordinator(db.pool, { listenPool });
  onTestFinished(async () => {
    await coordinator.close();
    await listenPool.end();
  });
  await coordinator.waitForWork(50); // connects the listener
  const startedAt = performance.now();
  const waited = coordinator.waitForWork(20_000);
  await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1", [applicationName]);
  await waited;
  expect(performance.now() - startedAt).toBeLessThan(5_000);
});
