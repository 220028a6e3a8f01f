/** What the harness and a benchmark child (lib/bench/child.ts) say to each other. */
import type { ProtocolTimingTotals } from "@/lib/worker/protocol-timings";

export type ChildRole =
  | {
      readonly role: "fenceline-worker";
      readonly transport: "direct" | "http";
      readonly databaseUrl: string;
      readonly baseUrl?: string;
      readonly token?: string;
      readonly concurrency: number;
      readonly receiptBatchSize?: number;
      /** Also serve the waits part's workflows (`bench-timer`, `bench-event`). */
      readonly waits?: boolean;
      /** Also serve the fan-out part's workflows (`bench-fan-out`, `bench-fan-child`). */
      readonly children?: boolean;
    }
  | {
      readonly role: "protocol-server";
      readonly databaseUrl: string;
      /** Behind a pooler: the direct URL for the long-poll LISTEN (lib/bench/cluster.ts). */
      readonly directUrl?: string;
      readonly token: string;
      readonly poolMax: number;
    }
  | {
      readonly role: "graphile-worker";
      readonly databaseUrl: string;
      readonly concurrency: number;
      /** localQueue.size; with it, completions are batched (completeJobBatchDelay 0). */
      readonly localQueueSize?: number;
    }
  | {
      readonly role: "pgboss-worker";
      readonly databaseUrl: string;
      readonly queue: string;
      readonly localConcurrency: number;
      readonly batchSize: number;
    }
  | {
      readonly role: "dbos-worker";
      readonly databaseUrl: string;
      /** systemDatabasePoolSize; DBOS's default when unset. */
      readonly poolSize?: number;
    };

export type ChildMessage =
  | { readonly type: "ready"; readonly port?: number }
  | { readonly type: "first-start"; readonly atMs: number }
  | {
      readonly type: "report";
      readonly statements: number;
      readonly handlerCalls: number;
      readonly samplesMs: number[];
      /** HTTP worker protocol timings of this process (its client or its server side), if it speaks it. */
      readonly protocolTimings: ProtocolTimingTotals | null;
    };

export type HarnessMessage = { readonly type: "report" } | { readonly type: "stop" };

/** Epoch milliseconds with sub-millisecond resolution, comparable between processes on one host. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** Payload field the producer stamps just before its enqueue call. */
export const SENT_AT = "benchSentAtMs";

/** DBOS's application name, on the producer's client and the workers: the queue and its workflows belong to it. */
export const DBOS_APPLICATION = "fenceline-bench";

/** The DBOS workflow the bench workers register: one step that concludes at once. */
export const DBOS_WORKFLOW = "noop";
