/**
 * With no DATABASE_URL every command uses this checkout's embedded PostgreSQL, starting it when
 * it is not running, and stops it when it exits unless another process of this checkout still
 * uses it: after each command here, no postgres process of the "checkout" (a throwaway data
 * directory and port) is left. A command that finds another checkout's cluster on its port stops
 * with a message naming that cluster's data directory and EMBEDDED_PG_PORT, and uses nothing of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { spawnNodeProcess as spawnProcess, type Spawned } from "@/lib/worker/test-process";
import { freePort } from "@/lib/net/free-port";
import { embeddedUnavailable, postgresProcesses, runToEnd, STACK_LINE, throwawayEmbedded, type ThrowawayEmbedded } from "./test-commands";

const TSX = ["--import", "tsx"];
const unavailable = embeddedUnavailable();

/** Runs a command to its end on the checkout's cluster; returns stdout and stderr together. */
async function runOnCluster(checkout: ThrowawayEmbedded, script: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs?: number) {
  const result = await runToEnd([...TSX, script], args, { ...checkout.env, ...env }, timeoutMs);
  return { code: result.code, output: result.stdout + result.stderr, stdout: result.stdout };
}

async function stop(child: Spawned): Promise<number | null> {
  child.process.kill("SIGTERM");
  return (await child.exited).code;
}

// A test that fails half-way leaves nothing running for the next one.
const spawned: Spawned[] = [];
function spawnNodeProcess(...args: Parameters<typeof spawnProcess>): Spawned {
  const child = spawnProcess(...args);
  spawned.push(child);
  return child;
}

// Each command starts and stops a whole PostgreSQL cluster: on a busy two-core machine that alone
// can take most of the default 30 s.
describe.skipIf(unavailable)(`each command on an embedded cluster of its own${unavailable ? ` (skipped: ${unavailable})` : ""}`, { timeout: 120_000 }, () => {
  let checkout: ThrowawayEmbedded;

  beforeAll(async () => {
    checkout = await throwawayEmbedded();
  });

  afterEach(async () => {
    await Promise.all(spawned.splice(0).filter((child) => child.alive).map(stop));
  });

  afterAll(async () => {
    for (const pid of postgresProcesses(checkout.dataDir)) process.kill(pid, "SIGTERM");
    await checkout.remove();
  });

  // The first command initialises the cluster and applies the migrations the others need.
  test("db:migrate initialises the cluster, applies the migrations and stops it", async () => {
    const result = await runOnCluster(checkout, "lib/cli/migrate.ts", ["deploy"]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toMatch(/^applied: \d+_engine/);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("retention prunes on the embedded database and stops it", async () => {
    const result = await runOnCluster(checkout, "lib/cli/retention.ts");
    expect(result.code, result.output).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ keptDays: 30 });
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("epoch:transition with no fenced destination registered moves the epoch and stops the cluster", async () => {
    const result = await runOnCluster(checkout, "lib/cli/epoch-transition.ts", [], { FENCELINE_EPOCH_DRAIN_MS: "100" });
    expect(result.code, result.output).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ state: "completed", destinations: {} });
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("a worker runs on the embedded database until SIGTERM, then stops it", async () => {
    const worker = spawnNodeProcess("worker", "lib/cli/worker.ts", checkout.env);
    await worker.waitForLine(/^FENCELINE_WORKER_READY /);
    expect(postgresProcesses(checkout.dataDir)).toHaveLength(1);
    expect(await stop(worker)).toBe(0);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("npm start stopped by SIGTERM stops the cluster it started", { timeout: 60_000 }, async () => {
    const start = spawnNodeProcess("start", "lib/cli/start.ts", {
      ...checkout.env,
      PORT: String(await freePort()),
      DESTINATION_PORT: "0",
      FENCELINE_WORKERS: "0",
      FENCELINE_DEMO: "sign-ins",
    });
    await start.waitForLine(/^\[start\] database postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/app \(embedded\)$/);
    await start.waitForLine(/^\[start\] (migrations up to date|applied migrations)/);
    expect(await stop(start)).toBe(0);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("bench runs its profile on the embedded cluster and stops it", async () => {
    const result = await runOnCluster(checkout, "lib/bench/cli.ts", ["--only", "profile", "--steps", "100"]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toMatch(/^Engine profile: 100 steps/m);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("test:model runs sequences on the embedded cluster and stops it", async () => {
    const result = await runOnCluster(checkout, "lib/model/cli.ts", ["--runs", "3", "--max-commands", "5", "--seed", "1"]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toMatch(/"sequences":3/);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("scenarios runs a cell on the embedded cluster and stops it", async () => {
    const result = await runOnCluster(checkout, "lib/scenarios/cli.ts", ["--only", "kill", "--contract", "idempotent", "--seed", "1"], {}, 120_000);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain("all cells passed");
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  }, 150_000);

  test("the cluster outlives the process that started it while another process of the checkout uses it", async () => {
    const first = spawnNodeProcess("worker-1", "lib/cli/worker.ts", checkout.env);
    await first.waitForLine(/^FENCELINE_WORKER_READY /);
    const second = spawnNodeProcess("worker-2", "lib/cli/worker.ts", checkout.env);
    await second.waitForLine(/^FENCELINE_WORKER_READY /);
    const [postmaster] = postgresProcesses(checkout.dataDir);

    expect(await stop(first)).toBe(0);
    expect(postgresProcesses(checkout.dataDir)).toEqual([postmaster]);
    expect(await stop(second)).toBe(0);
    expect(postgresProcesses(checkout.dataDir)).toEqual([]);
  });

  test("a command that finds another checkout's cluster on its port names it and the setting, and leaves it alone", async () => {
    const other = await throwawayEmbedded();
    try {
      // The first checkout's cluster runs, on the port the other checkout is told to use.
      const worker = spawnNodeProcess("worker", "lib/cli/worker.ts", checkout.env);
      await worker.waitForLine(/^FENCELINE_WORKER_READY /);
      const [postmaster] = postgresProcesses(checkout.dataDir);

      const result = await runOnCluster(other, "lib/cli/retention.ts", [], { EMBEDDED_PG_PORT: String(checkout.port) });
      expect(result.code, result.output).toBe(1);
      expect(result.output.trim()).toBe(
        `npm run retention: port ${checkout.port} is taken by the embedded PostgreSQL of another checkout (data directory ${checkout.dataDir}); ` +
          `set EMBEDDED_PG_PORT to a free port to run this checkout's own (data directory ${other.dataDir})`,
      );
      expect(postgresProcesses(other.dataDir)).toEqual([]);
      expect(postgresProcesses(checkout.dataDir)).toEqual([postmaster]);

      expect(await stop(worker)).toBe(0);
      expect(postgresProcesses(checkout.dataDir)).toEqual([]);
    } finally {
      await other.remove();
    }
  });
});
