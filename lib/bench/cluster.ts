/**
 * The cluster row (decision 016): Fenceline's HTTP workers through haproxy (round robin) to 1, 2
 * or 4 worker-protocol servers, each reaching PostgreSQL through PgBouncer in transaction mode
 * with unnamed statements (FENCELINE_DB_PREPARED=off) and its LISTEN on the direct URL. Per
 * replica count: throughput (`steps` no-op steps enqueued first, the window from the first
 * handler start to the last receipt) and start latency (one request at a time at
 * LATENCY_RATE_PER_S, from the enqueue to its handler's start, one worker process). The
 * protocol servers are the web app's worker protocol without Next, as in the fencelineHttp row;
 * having no /api/health, haproxy checks them by TCP.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type pg from "pg";
import { configDirectory, haproxyChild, pgbouncerChild, pinSearchPath, pooledUrl } from "@/lib/cli/cluster";
import type { ChildSpec } from "@/lib/cli/supervisor";
import { resolveDatabaseUrl } from "@/lib/db/database";
import { deployMigrations } from "@/lib/db/migrate.mjs";
import { createPool } from "@/lib/db/pool";
import { waitForDatabase } from "@/lib/db/readiness";
import { createWorkflows } from "@/lib/engine/workflow";
import { freePort } from "@/lib/net/free-port";
import { epochMs, SENT_AT } from "./child-protocol";
import { FENCELINE_CONCURRENCY, FENCELINE_PROCESSES } from "./engines";
import { spawnChild, type BenchChild } from "./processes";
import { percentile, round, sleep } from "./stats";
import { benchDraft } from "./workflows";

export type ClusterResult = {
  readonly replicas: number;
  readonly steps: number;
  readonly completed: number;
  readonly stepsPerS: number;
  readonly latency: { readonly samples: number; readonly p50: number; readonly p95: number; readonly p99: number };
};

const BENCH_TOKEN = "fenceline-bench-worker-token";
const ENQUEUE_BATCH = 500;
const POLL_MS = 25;
const LATENCY_RATE_PER_S = 50;
const POOLER_READY_MS = 15_000;
const DRAIN_TIMEOUT_MS = 10_000;

export async function measureCluster(replicaCounts: readonly number[], steps: number, latencyMs: number, timeoutMs: number): Promise<ClusterResult[]> {
  const results: ClusterResult[] = [];
  for (const replicas of replicaCounts) {
    const throughput = await withCluster(replicas, FENCELINE_PROCESSES, async (shape) => {
      await enqueue(shape.harness, steps);
      const workers = await shape.startWorkers();
      const firstStart = Promise.race(workers.map((worker) => worker.firstStart));
      const deadline = performance.now() + timeoutMs;
      let completed = 0;
      while (completed < steps && performance.now() < deadline) {
        await sleep(POLL_MS);
        completed = await receipts(shape.harness);
      }
      const endMs = performance.timeOrigin + performance.now();
      const startMs = await Promise.race([firstStart, sleep(1_000).then(() => endMs)]);
      return { completed, stepsPerS: round((completed / (endMs - startMs)) * 1000, 0) };
    });
    // As lib/bench/latency.ts: requests on a fixed schedule, the first second's discarded.
    const latency = await withCluster(replicas, 1, async (shape) => {
      const workers = await shape.startWorkers();
      const intervalMs = 1000 / LATENCY_RATE_PER_S;
      const total = Math.round((latencyMs / 1000) * LATENCY_RATE_PER_S);
      const calls: Promise<unknown>[] = [];
      const startedAt = performance.now();
      for (let i = 0; i < total; i += 1) {
        const dueIn = startedAt + i * intervalMs - performance.now();
        if (dueIn > 0) await sleep(dueIn);
        calls.push(createWorkflows(shape.harness, [benchDraft({ [SENT_AT]: epochMs() })]));
      }
      await Promise.all(calls);
      const deadline = performance.now() + DRAIN_TIMEOUT_MS;
      while ((await receipts(shape.harness)) < total && performance.now() < deadline) await sleep(50);
      const samples = (await Promise.all(workers.map((worker) => worker.report()))).flatMap((report) => report.samplesMs).slice(LATENCY_RATE_PER_S);
      return { samples: samples.length, p50: round(percentile(samples, 50), 2), p95: round(percentile(samples, 95), 2), p99: round(percentile(samples, 99), 2) };
    });
    results.push({ replicas, steps, ...throughput, latency });
  }
  return results;
}

type Shape = { readonly harness: pg.Pool; startWorkers(): Promise<BenchChild[]> };

/**
 * A fresh database, PgBouncer in front of it, `replicas` protocol servers behind haproxy; `work`
 * starts `workerProcesses` HTTP workers when it is ready for them. Everything stops afterwards,
 * workers first, the pooler last.
 */
async function withCluster<T>(replicas: number, workerProcesses: number, work: (shape: Shape) => Promise<T>): Promise<T> {
  const { url } = await resolveDatabaseUrl({ database: "fl_bench_cluster", fresh: true });
  await deployMigrations(url);
  const harness = createPool(url, { applicationName: "bench-harness", max: 4 });
  const config = configDirectory();
  const processes: ChildProcess[] = [];
  const children: BenchChild[] = [];
  try {
    await pinSearchPath(harness, url);
    const poolerPort = await freePort();
    const pooler = launch(pgbouncerChild(config.dir, { directUrl: url, port: poolerPort, poolSize: 20 }));
    processes.push(pooler);
    const exited = new Promise((resolve) => pooler.once("exit", resolve));
    if (!(await waitForDatabase(pooledUrl(url, poolerPort), { timeoutMs: POOLER_READY_MS, exited }))) throw new Error(`PgBouncer exited (code ${pooler.exitCode}) before accepting a connection`);
    const servers = Array.from({ length: replicas }, () =>
      spawnChild(
        { role: "protocol-server", databaseUrl: pooledUrl(url, poolerPort), directUrl: url, token: BENCH_TOKEN, poolMax: 10 },
        { FENCELINE_DB_PREPARED: "off" },
      ),
    );
    children.push(...servers);
    const ports = (await Promise.all(servers.map((server) => server.ready))).map((ready) => ready.port!);
    const balancerPort = await freePort();
    processes.push(launch(haproxyChild(config.dir, { port: balancerPort, replicaPorts: ports, healthPath: null })));
    await answering(`http://127.0.0.1:${balancerPort}/`);
    return await work({
      harness,
      startWorkers: async () => {
        const workers = Array.from({ length: workerProcesses }, () =>
          spawnChild({ role: "fenceline-worker", transport: "http", databaseUrl: url, baseUrl: `http://127.0.0.1:${balancerPort}`, token: BENCH_TOKEN, concurrency: FENCELINE_CONCURRENCY }),
        );
        children.unshift(...workers);
        await Promise.all(workers.map((worker) => worker.ready));
        return workers;
      },
    });
  } finally {
    for (const child of children) await child.stop();
    for (const launched of processes.reverse()) await stopProcess(launched);
    config.remove();
    await harness.end();
  }
}

async function enqueue(pool: pg.Pool, count: number): Promise<void> {
  for (let offset = 0; offset < count; offset += ENQUEUE_BATCH) {
    await createWorkflows(pool, Array.from({ length: Math.min(ENQUEUE_BATCH, count - offset) }, (_, i) => benchDraft({ n: offset + i })));
  }
}

async function receipts(pool: pg.Pool): Promise<number> {
  return Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM receipt")).rows[0]!.n);
}

/** haproxy or PgBouncer in the foreground, its output on our stderr (stdout carries --json). */
function launch(spec: ChildSpec): ChildProcess {
  return spawn(spec.command, spec.args, { stdio: ["ignore", 2, 2] });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Any HTTP answer: haproxy is listening (its health checks mark the servers up at once). */
async function answering(url: string): Promise<void> {
  const deadline = Date.now() + POOLER_READY_MS;
  while (!(await fetch(url).then(() => true, () => false))) {
    if (Date.now() > deadline) throw new Error(`haproxy at ${url} did not answer within ${POOLER_READY_MS} ms`);
    await sleep(100);
  }
}
