/**
 * The HTTP breakdown of a run over the worker protocol: per operation, how many calls per step
 * and where a call's time went, the workers' side (lib/worker/http-coordinator.ts) beside the
 * protocol server's (lib/api/worker-protocol.ts). `wire` is what the client waited for beyond
 * the server's own time: loopback, connection handling, and both processes' event loops.
 */
import type { ProtocolPhase, ProtocolTimingTotals } from "@/lib/worker/protocol-timings";
import { round } from "./stats";

export type HttpOperationBreakdown = {
  readonly calls: number;
  readonly callsPerStep: number;
  /** Mean ms per call, by phase, on the workers' side. */
  readonly client: Partial<Record<ProtocolPhase, number>>;
  /** Mean ms per call, by phase, in the protocol server. */
  readonly server: Partial<Record<ProtocolPhase, number>>;
  /** Mean ms per call the client waited beyond the server's total. */
  readonly wireMs: number | null;
  /** The client's summed total time of this operation, per step (in ms across all workers' calls). */
  readonly clientMsPerStep: number;
};

export type HttpBreakdown = Record<string, HttpOperationBreakdown>;

function merge(all: readonly ProtocolTimingTotals[]): ProtocolTimingTotals {
  const merged: ProtocolTimingTotals = {};
  for (const totals of all) {
    for (const [operation, phases] of Object.entries(totals)) {
      const into = (merged[operation] ??= {});
      for (const [phase, entry] of Object.entries(phases) as [ProtocolPhase, { count: number; ms: number }][]) {
        const sum = (into[phase] ??= { count: 0, ms: 0 });
        sum.count += entry.count;
        sum.ms += entry.ms;
      }
    }
  }
  return merged;
}

const means = (phases: ProtocolTimingTotals[string] | undefined) =>
  Object.fromEntries(Object.entries(phases ?? {}).map(([phase, entry]) => [phase, round(entry.ms / Math.max(1, entry.count), 3)])) as Partial<Record<ProtocolPhase, number>>;

/** Combines the clients' and the server's totals; `steps` is what the run completed. */
export function httpBreakdown(clients: readonly ProtocolTimingTotals[], servers: readonly ProtocolTimingTotals[], steps: number): HttpBreakdown {
  const client = merge(clients);
  const server = merge(servers);
  const operations = [...new Set([...Object.keys(client), ...Object.keys(server)])].sort();
  return Object.fromEntries(
    operations.map((operation) => {
      const calls = client[operation]?.total?.count ?? server[operation]?.total?.count ?? 0;
      const clientMeans = means(client[operation]);
      const serverMeans = means(server[operation]);
      const wireMs = clientMeans.exchange !== undefined && serverMeans.total !== undefined ? round(clientMeans.exchange - serverMeans.total, 3) : null;
      return [
        operation,
        {
          calls,
          callsPerStep: round(calls / Math.max(1, steps), 4),
          client: clientMeans,
          server: serverMeans,
          wireMs,
          clientMsPerStep: round((client[operation]?.total?.ms ?? 0) / Math.max(1, steps), 4),
        },
      ];
    }),
  );
}
