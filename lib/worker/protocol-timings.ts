/**
 * Where the HTTP worker protocol spends its time: count and summed milliseconds per operation and
 * phase, on either side of the wire. The client (http-coordinator.ts) and the server
 * (lib/api/worker-protocol.ts) each take an optional recorder; `npm run bench` passes one to each
 * process and reports the HTTP breakdown from their totals. Sums only, so recording costs two
 * additions.
 */

/**
 * Client phases: `encode` (JSON.stringify of the body), `exchange` (the request written until
 * the whole answer is read: connection, network, the server's work), `decode` (JSON.parse and
 * the checks of the answer), `total`. Server phases: `auth` (the worker token), `body` (read and validate),
 * `work` (session check, engine call, answer through its schema), `total` (the node:http
 * listener: request end to response written).
 */
export type ProtocolPhase = "encode" | "exchange" | "decode" | "total" | "auth" | "body" | "work";

/** Per operation, per phase: how many were timed and their summed milliseconds. */
export type ProtocolTimingTotals = Record<string, Partial<Record<ProtocolPhase, { count: number; ms: number }>>>;

/** Accumulates protocol timings in one process. */
export class ProtocolTimings {
  private readonly totals: ProtocolTimingTotals = {};

  /** Adds one timed phase of one operation. */
  add(operation: string, phase: ProtocolPhase, ms: number): void {
    const phases = (this.totals[operation] ??= {});
    const entry = (phases[phase] ??= { count: 0, ms: 0 });
    entry.count += 1;
    entry.ms += ms;
  }

  /** The totals so far, and starts counting afresh. */
  take(): ProtocolTimingTotals {
    const taken = structuredClone(this.totals);
    for (const operation of Object.keys(this.totals)) delete this.totals[operation];
    return taken;
  }
}
