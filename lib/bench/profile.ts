/**
 * The engine's own cost per step, without worker processes: one session on one connection claims
 * `batch` no-op steps at a time and commits their receipts as one batch, through the engine's
 * functions, until every step is done. Each statement is timed at the client by its name (round
 * trip included), and PostgreSQL says how it planned each prepared statement: a statement planned
 * afresh on every call ("custom") pays its planning time each time.
 */
import { existsSync } from "node:fs";
import type pg from "pg";
import { createPool } from "@/lib/db/pool";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { registerSession } from "@/lib/engine/session";
import { setUpEngine } from "./engines";
import { cpuTimeMs } from "./processes";
import { round } from "./stats";

export type StatementProfile = {
  readonly statement: string;
  readonly calls: number;
  /** Client-side time per step: execution, planning when not cached, and the round trip. */
  readonly usPerStep: number;
  readonly genericPlans: number | null;
  readonly customPlans: number | null;
};

export type ProfileResult = {
  readonly steps: number;
  readonly batch: number;
  readonly stepsPerS: number;
  readonly usPerStep: number;
  /**
   * CPU of the connection's backend per step, µs, read from /proc when PostgreSQL runs on this
   * host (null otherwise): unlike the client's clock, it hardly moves with the machine's load.
   */
  readonly backendCpuUsPerStep: number | null;
  readonly statements: StatementProfile[];
};

const noop = { kind: "effect", externalReference: null, result: null, verification: "direct_response" } as const;

export async function measureProfile(steps: number, batch: number): Promise<ProfileResult> {
  const setup = await setUpEngine("fencelineDirect");
  const timings = new Map<string, { calls: number; ms: number }>();
  const pool = createPool(setup.databaseUrl, { applicationName: "bench-profile", max: 1 });
  pool.on("connect", (client) => timeQueries(client, timings));
  try {
    await setup.enqueueMany(steps);
    await setup.pool.query("ANALYZE");
    const session = await registerSession(pool, "direct");
    const backendPid = Number((await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
    timings.clear();
    const backendCpuAtStartMs = cpuTimeMs(backendPid);
    let done = 0;
    const started = performance.now();
    for (;;) {
      const claimed = await claimSteps(pool, session, [{ kind: "bench", version: 1 }], batch);
      if (claimed.length === 0) break;
      const results = await commitReceipts(
        pool,
        session,
        claimed.map((step) => ({ lease: { stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId: session }, conclusion: noop })),
      );
      done += results.filter((result) => result.committed).length;
    }
    const elapsedMs = performance.now() - started;
    // No /proc entry for the backend: the server runs elsewhere.
    const backendCpuMs = existsSync(`/proc/${backendPid}/stat`) ? cpuTimeMs(backendPid) - backendCpuAtStartMs : null;
    const measured = [...timings];
    const client = await pool.connect();
    const plans = await client
      .query<{ name: string; generic_plans: string; custom_plans: string }>("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements")
      .finally(() => client.release());
    const planOf = new Map(plans.rows.map((row) => [row.name, row]));
    const perStep = (ms: number) => round((ms * 1000) / Math.max(1, done), 1);
    return {
      steps: done,
      batch,
      stepsPerS: round((done / elapsedMs) * 1000, 0),
      usPerStep: perStep(elapsedMs),
      backendCpuUsPerStep: backendCpuMs === null ? null : perStep(backendCpuMs),
      statements: measured
        .sort(([, a], [, b]) => b.ms - a.ms)
        .map(([statement, { calls, ms }]) => ({
          statement,
          calls,
          usPerStep: perStep(ms),
          genericPlans: planOf.has(statement) ? Number(planOf.get(statement)!.generic_plans) : null,
          customPlans: planOf.has(statement) ? Number(planOf.get(statement)!.custom_plans) : null,
        })),
    };
  } finally {
    await pool.end();
    await setup.drop();
  }
}

/** Times every query the client sends, keyed by statement name (or its first words when unnamed). */
function timeQueries(client: pg.PoolClient, timings: Map<string, { calls: number; ms: number }>): void {
  const send = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<pg.QueryResult>;
  const timed = (config: unknown, values?: unknown, callback?: unknown): Promise<pg.QueryResult> | undefined => {
    const key = typeof config === "string" ? config.slice(0, 40) : ((config as { name?: string }).name ?? "unnamed");
    const started = performance.now();
    const record = () => {
      const entry = timings.get(key) ?? { calls: 0, ms: 0 };
      timings.set(key, { calls: entry.calls + 1, ms: entry.ms + performance.now() - started });
    };
    const promise = send(config, typeof values === "function" ? undefined : values).finally(record);
    // The pool's own query() passes a callback (in either position) rather than awaiting.
    const done = typeof values === "function" ? values : callback;
    if (typeof done !== "function") return promise;
    promise.then((result) => done(null, result), (error: unknown) => done(error));
    return undefined;
  };
  client.query = timed as unknown as typeof client.query;
}
