/**
 * The cost of tracing (`npm run bench -- --only tracing`): Fenceline's throughput rows, direct and
 * over HTTP, with tracing off and on in the same run. On, every request carries a sampled
 * traceparent (as one created inside an app's span does), and the workers and the protocol server
 * export every span over OTLP/HTTP (JSON) to a receiver in this process that decodes and counts
 * them. Off, the OTEL_* variables are unset and no SDK module is loaded. Runs alternate off and on,
 * and which goes first turns from round to round; medians are reported.
 *
 * Two figures of cost. Throughput (1 − on/off steps a second) is what the issue asks for, but on
 * a shared 2-core machine one run's rate swings by a factor of 3 with the neighbours' load. CPU
 * per step — the workers', the protocol server's and PostgreSQL's backends', all measured from
 * /proc — swings far less, and on a machine whose cores are the bottleneck the rate it allows is
 * the inverse of it: `cpuCostPercent` is 1 − off/on of the medians of that total.
 */
import { startOtlpReceiver } from "@/lib/telemetry/test-receiver";
import type { EngineName } from "./engines";
import { round } from "./stats";
import { measureThroughput } from "./throughput";

export const TRACING_ENGINES = ["fencelineDirect", "fencelineHttp"] as const satisfies readonly EngineName[];

export type TracingRow = {
  readonly engine: (typeof TRACING_ENGINES)[number];
  readonly offStepsPerS: readonly number[];
  readonly onStepsPerS: readonly number[];
  readonly offMedian: number;
  readonly onMedian: number;
  /** 1 − on/off of the medians, in per cent: the throughput tracing costs. */
  readonly costPercent: number;
  /** Spans the receiver decoded per completed step, over the runs with tracing on. */
  readonly spansPerStep: number;
  /** The workers' and (over HTTP) the protocol server's CPU per completed step; medians. */
  readonly workerCpuMsPerStep: { readonly off: number; readonly on: number };
  /** PostgreSQL's backends' CPU per completed step; medians. */
  readonly postgresCpuMsPerStep: { readonly off: number; readonly on: number };
  /** 1 − off/on of the medians of all CPU per step (workers, server, PostgreSQL), in per cent. */
  readonly cpuCostPercent: number;
};

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

export async function measureTracing(
  steps: number,
  rounds: number,
  timeoutMs: number,
  log: (line: string) => void,
  engines: readonly (typeof TRACING_ENGINES)[number][] = TRACING_ENGINES,
): Promise<TracingRow[]> {
  const receiver = await startOtlpReceiver({ keep: false });
  try {
    const rows: TracingRow[] = [];
    for (const engine of engines) {
      const off: number[] = [];
      const on: number[] = [];
      const cpu = { off: [] as number[], on: [] as number[] };
      const postgres = { off: [] as number[], on: [] as number[] };
      const total = { off: [] as number[], on: [] as number[] };
      let spans = 0;
      let completedOn = 0;
      for (let r = 0; r < rounds; r += 1) {
        for (const traced of r % 2 === 0 ? [false, true] : [true, false]) {
          log(`tracing ${engine} ${traced ? "on" : "off"} (${steps} steps, round ${r + 1}/${rounds})`);
          const before = receiver.received();
          const result = await measureThroughput(engine, steps, timeoutMs, true, traced ? { endpoint: receiver.endpoint } : null);
          (traced ? on : off).push(result.stepsPerS);
          (traced ? cpu.on : cpu.off).push(result.workerCpuMsPerStep);
          (traced ? postgres.on : postgres.off).push(result.postgresCpuMsPerStep);
          (traced ? total.on : total.off).push(result.workerCpuMsPerStep + result.postgresCpuMsPerStep);
          if (traced) {
            spans += receiver.received() - before;
            completedOn += result.completed;
          }
          log(`  ${result.stepsPerS} steps/s, CPU ms/step: worker ${result.workerCpuMsPerStep}, PostgreSQL ${result.postgresCpuMsPerStep}${traced ? `, ${receiver.received() - before} spans received` : ""}`);
        }
      }
      const [offMedian, onMedian] = [median(off), median(on)];
      const [offCpu, onCpu] = [median(total.off), median(total.on)];
      rows.push({
        engine,
        offStepsPerS: off,
        onStepsPerS: on,
        offMedian,
        onMedian,
        costPercent: offMedian > 0 ? round((1 - onMedian / offMedian) * 100, 1) : 0,
        spansPerStep: round(spans / Math.max(1, completedOn), 2),
        workerCpuMsPerStep: { off: median(cpu.off), on: median(cpu.on) },
        postgresCpuMsPerStep: { off: median(postgres.off), on: median(postgres.on) },
        cpuCostPercent: onCpu > 0 ? round((1 - offCpu / onCpu) * 100, 1) : 0,
      });
    }
    return rows;
  } finally {
    await receiver.close();
  }
}
