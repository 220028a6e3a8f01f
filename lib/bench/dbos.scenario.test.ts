/**
 * The benchmark's DBOS rows end to end on a small run, with real DBOS worker processes on real
 * PostgreSQL: a few hundred one-step workflows enqueued in bulk, then a few one at a time (as
 * start latency does), are each completed exactly once, counted from DBOS's own tables (one
 * status row in SUCCESS, dequeued once, one recorded step) and from the handler runs.
 */
import { afterAll, afterEach, expect, test } from "vitest";
import { releaseEmbeddedCluster } from "@/lib/db/database";
import { epochMs } from "./child-protocol";
import { setUpEngine, type EngineSetup } from "./engines";
import type { BenchChild } from "./processes";
import { sleep } from "./stats";

const BULK = 300;
const SINGLE = 5;
const DRAIN_TIMEOUT_MS = 90_000;

let running: { setup: EngineSetup; children: BenchChild[] } | null = null;

afterEach(async () => {
  if (!running) return;
  for (const child of running.children) await child.stop();
  await running.setup.drop();
  running = null;
});

// The engines found the server themselves (as the bench does): this process is done with it.
afterAll(releaseEmbeddedCluster);

async function drained(setup: EngineSetup, count: number): Promise<number> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  let completed = await setup.completed();
  while (completed < count && performance.now() < deadline) {
    await sleep(100);
    completed = await setup.completed();
  }
  return completed;
}

test.each(["dbosTuned", "dbosDefault"] as const)("%s completes every workflow exactly once", { timeout: 180_000 }, async (engine) => {
  const setup = await setUpEngine(engine);
  running = { setup, children: [] };
  await setup.enqueueMany(BULK);
  running.children = await setup.startWorkers();
  expect(running.children).toHaveLength(2);
  expect(await drained(setup, BULK)).toBe(BULK);
  for (let i = 0; i < SINGLE; i += 1) await setup.enqueueOne(epochMs());
  expect(await drained(setup, BULK + SINGLE)).toBe(BULK + SINGLE);

  const reports = await Promise.all(running.children.map((child) => child.report()));
  expect(reports.reduce((sum, report) => sum + report.handlerCalls, 0)).toBe(BULK + SINGLE);
  // Only the single enqueues carry a start stamp.
  expect(reports.flatMap((report) => report.samplesMs)).toHaveLength(SINGLE);

  const { rows: status } = await setup.pool.query<{ total: string; succeeded: string; dequeued_more_than_once: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE status = 'SUCCESS') AS succeeded,
            count(*) FILTER (WHERE recovery_attempts <> 1) AS dequeued_more_than_once
       FROM dbos.workflow_status`,
  );
  expect(status[0]).toEqual({ total: String(BULK + SINGLE), succeeded: String(BULK + SINGLE), dequeued_more_than_once: "0" });
  const { rows: steps } = await setup.pool.query<{ outputs: string; workflows: string }>(
    "SELECT count(*) AS outputs, count(DISTINCT workflow_uuid) AS workflows FROM dbos.operation_outputs WHERE function_name = 'only'",
  );
  expect(steps[0]).toEqual({ outputs: String(BULK + SINGLE), workflows: String(BULK + SINGLE) });
});
