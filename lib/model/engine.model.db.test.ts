/**
 * The engine behaves like SPEC.md's reference model (lib/model/model.ts) under any sequence of
 * claims, renewals, checkpoints, destination faults, late observations, expiries, recovery
 * scans (also two at once), revocations, pauses, cancellations and races between them, and
 * SPEC.md's invariants 1–8 hold after every command. A failure shrinks to a minimal sequence and
 * prints the seed and path that replay it (`MODEL_SEED=… MODEL_PATH=… MODEL_REPLAY_PATH=…`).
 */
import fc from "fast-check";
import { expect } from "vitest";
import { dbTest } from "@/lib/db/test-database";
import { engineProperty } from "./commands";

const RUNS = Number(process.env.MODEL_RUNS ?? 1000);

dbTest("the real engine agrees with the reference model on every command sequence", { timeout: 600_000 }, async ({ db }) => {
  const stats = { sequences: 0, commands: 0 };
  const startedAt = Date.now();
  await fc.assert(engineProperty(db.pool, stats, 50, process.env.MODEL_REPLAY_PATH), {
    numRuns: RUNS,
    seed: process.env.MODEL_SEED ? Number(process.env.MODEL_SEED) : undefined,
    path: process.env.MODEL_PATH,
    endOnFailure: process.env.MODEL_NO_SHRINK === "1",
  });
  const seconds = (Date.now() - startedAt) / 1000;
  console.log(`model: ${stats.sequences} sequences, ${stats.commands} commands in ${seconds.toFixed(1)} s`);
  expect(stats.sequences).toBeGreaterThanOrEqual(RUNS);
});
