/**
 * The restore drill inside npm test (lib/scenarios/restore.ts): against the real destination
 * service, a stale worker's write after a restore is accepted without an epoch transition — the
 * hazard is real — and refused with one.
 */
import { expect } from "vitest";
import { startDestinationService } from "@/lib/demo/destination/service";
import { dbTest } from "@/lib/db/test-database";
import { truncateEngineTables } from "@/lib/engine/test-support";
import { runRestoreDrill } from "./restore";

const test = dbTest.extend("destination", { scope: "file" }, async ({ db }, { onCleanup }) => {
  const service = await startDestinationService({ databaseUrl: db.url, port: 0 });
  onCleanup(() => service.close());
  return service;
});

test.beforeEach(async ({ db, destination }) => {
  expect(destination.url).toMatch(/^http:/);
  await truncateEngineTables(db.pool);
  await db.pool.query("TRUNCATE epoch_transition, destination_block; DELETE FROM epoch WHERE id > 1");
  await db.pool.query("TRUNCATE destination.installed_epoch, destination.fence, destination.binding, destination.effect");
});

test("without an epoch transition, the fenced destination accepts a stale worker's write after a restore", async ({ db, destination }) => {
  const outcome = await runRestoreDrill(db.pool, destination.url, { withTransition: false, label: "no-transition" });
  expect(outcome.staleTerm).toEqual({ epoch: "1", term: "2" });
  expect(outcome.replacementTerm).toEqual({ epoch: "1", term: "1" });
  expect(outcome.replacementAccepted).toBe(true);
  expect(outcome.staleWriteAcceptedAtDestination).toBe(true);
  expect(outcome.staleEngineWriteRefused).toBe(true);
});

test("with an epoch transition, the same stale write is refused and the replacement completes", async ({ db, destination }) => {
  const outcome = await runRestoreDrill(db.pool, destination.url, { withTransition: true, label: "transition" });
  expect(outcome.epochAfter).toBe("2");
  expect(outcome.replacementTerm).toEqual({ epoch: "2", term: "1" });
  expect(outcome.replacementAccepted).toBe(true);
  expect(outcome.staleWriteAcceptedAtDestination).toBe(false);
  expect(outcome.staleEngineWriteRefused).toBe(true);
});
