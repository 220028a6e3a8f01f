/**
 * Start latency under light load: the harness enqueues one step (or job) at a time at a fixed
 * rate, stamping the payload just before the enqueue call; the worker stamps handler entry. The
 * figure therefore includes the enqueue round trip, the wake-up and the claim. The first second
 * is excluded (connections warming up), as in the peers' anchors.
 */
import type { EngineName } from "./engines";
import { setUpEngine } from "./engines";
import { epochMs } from "./child-protocol";
import { percentile, round, sleep } from "./stats";

export type LatencyResult = {
  readonly engine: EngineName;
  readonly settings: string;
  readonly ratePerS: number;
  readonly sent: number;
  readonly started: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  /** The enqueue call alone, p50 (the producer's round trip, part of every sample). */
  readonly enqueueP50: number;
};

const WARM_UP_MS = 1_000;
const DRAIN_TIMEOUT_MS = 10_000;

export async function measureStartLatency(engine: EngineName, ratePerS: number, durationMs: number): Promise<LatencyResult> {
  const setup = await setUpEngine(engine);
  try {
    const children = await setup.startWorkers(1);
    const intervalMs = 1000 / ratePerS;
    const total = Math.round((durationMs / 1000) * ratePerS);
    const warmUp = Math.round((WARM_UP_MS / 1000) * ratePerS);
    const enqueueMs: number[] = [];
    const calls: Promise<void>[] = [];
    const startedAt = performance.now();
    for (let i = 0; i < total; i += 1) {
      const dueIn = startedAt + i * intervalMs - performance.now();
      if (dueIn > 0) await sleep(dueIn);
      const sentAt = epochMs();
      calls.push(setup.enqueueOne(sentAt).then(() => void enqueueMs.push(epochMs() - sentAt)));
    }
    await Promise.all(calls);
    const deadline = performance.now() + DRAIN_TIMEOUT_MS;
    while ((await setup.completed()) < total && performance.now() < deadline) await sleep(50);

    const reports = await Promise.all(children.map((child) => child.report()));
    // Workers first, then any server they talk to (started first).
    for (const child of [...children].reverse()) await child.stop();
    // Samples arrive in start order per process; the warm-up is the earliest-sent ones.
    const samples = reports.flatMap((report) => report.samplesMs);
    const measured = samples.length > warmUp ? samples.slice(warmUp) : samples;
    return {
      engine,
      settings: setup.settings,
      ratePerS,
      sent: total,
      started: samples.length,
      p50: round(percentile(measured, 50), 2),
      p95: round(percentile(measured, 95), 2),
      p99: round(percentile(measured, 99), 2),
      max: round(Math.max(...measured), 1),
      enqueueP50: round(percentile(enqueueMs.slice(warmUp), 50), 2),
    };
  } finally {
    await setup.drop();
  }
}
