/** The direct database transport: engine functions over a pg pool, woken by LISTEN/NOTIFY. */
import type { Pool, PoolClient } from "pg";
import { beginInvocation, observeEffectAbsent, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { postLateObservation } from "@/lib/engine/late-observation";
import { claimSteps, releaseLease, renewLeases } from "@/lib/engine/lease";
import { acquirePermit, holdPermit, releasePermit, sweepPermits } from "@/lib/engine/permit";
import { commitReceipts } from "@/lib/engine/receipt";
import { reportFailure, runRecoveryScan } from "@/lib/engine/recovery";
import { heartbeatSession, registerWorkerSession, stopSession } from "@/lib/engine/session";
import type { Coordinator } from "./coordinator";

const READY_CHANNEL = "fenceline_step_ready";

/**
 * `listenPool` holds the LISTEN connection: a session of its own, so behind a pooler in
 * transaction mode it must be a direct pool (lib/db/pool.ts sessionPoolOf); by default `pool`.
 */
export function directCoordinator(pool: Pool, listenPool: Pool = pool): Coordinator {
  let listener: PoolClient | null = null;
  let listening: Promise<void> | null = null;
  let stopListening: () => Promise<void> = async () => undefined;
  const waiters = new Set<() => void>();
  // A notification that arrives while no one waits (a claim is in flight, and its snapshot may
  // predate the new step) is kept for the next wait, which then returns at once instead of
  // sleeping until its timeout.
  let missed = false;
  const wakeAll = () => {
    if (waiters.size === 0) missed = true;
    for (const wake of waiters) wake();
    waiters.clear();
  };

  const listen = (): Promise<void> => {
    listening ??= (async () => {
      const client = await listenPool.connect();
      // A lost listener connection only costs latency: waits fall back to their timeout.
      const lost = () => {
        client.off("notification", wakeAll);
        listener = null;
        listening = null;
        client.release(true);
      };
      client.on("notification", wakeAll);
      client.once("error", lost);
      stopListening = async () => {
        client.off("notification", wakeAll);
        client.off("error", lost);
        await client.query(`UNLISTEN ${READY_CHANNEL}`).catch(() => undefined);
        client.release();
      };
      await client.query(`LISTEN ${READY_CHANNEL}`);
      listener = client;
    })().catch(() => {
      listening = null;
    });
    return listening;
  };

  return {
    transport: "direct",
    registerSession: (registration) => registerWorkerSession(pool, { transport: "direct", registration }),
    heartbeat: (sessionId) => heartbeatSession(pool, sessionId),
    stopSession: (sessionId, reason) => stopSession(pool, sessionId, reason),
    claim: (sessionId, served, limit) => claimSteps(pool, sessionId, served, limit),
    renew: (sessionId, requests) => renewLeases(pool, sessionId, requests),
    persistRequestIdentity: (lease, proposed, adapterVersion) => persistRequestIdentity(pool, lease, proposed, adapterVersion),
    beginInvocation: (lease) => beginInvocation(pool, lease),
    observeResponse: (lease, externalReference, result) => observeResponse(pool, lease, externalReference, result),
    observeEffectAbsent: (lease, answer) => observeEffectAbsent(pool, lease, answer),
    acquirePermit: (lease, request) => acquirePermit(pool, lease, request),
    releasePermit: (permitId) => releasePermit(pool, permitId),
    holdPermit: (permitId, reason, holdMs) => holdPermit(pool, permitId, reason, holdMs),
    commitReceipts: (sessionId, requests) => commitReceipts(pool, sessionId, requests),
    reportFailure: async (lease, reason) => {
      await reportFailure(pool, lease, reason);
    },
    release: (lease, reason, options) => releaseLease(pool, lease, reason, options),
    postLateObservation: async (lease, observation) => {
      await postLateObservation(pool, lease, observation);
    },
    recover: async (decidedBy, batchSize) =>
      (await runRecoveryScan(pool, { decidedBy, batchSize })).length + (await sweepPermits(pool, batchSize)),
    waitForWork: async (timeoutMs) => {
      await listen();
      if (missed) {
        missed = false;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(done);
          resolve();
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.add(done);
      });
    },
    close: async () => {
      wakeAll();
      if (listener) {
        listener = null;
        await stopListening();
      }
    },
  };
}
