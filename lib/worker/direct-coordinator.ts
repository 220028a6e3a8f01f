/**
 * The direct database transport: engine functions over a pg pool, woken by LISTEN/NOTIFY. It is
 * also where a coordinator notices a failover: on start and with every recovery pass it compares
 * the database's identity with the one recorded with the current epoch (lib/engine/epoch-identity.ts)
 * and, when it changed, runs the epoch transition in the background, so the recovery passes that
 * end the dead leases the transition waits for go on. With a retention schedule it also offers,
 * with those passes, to run the retention job when it is due (decision 017).
 */
import type { Pool } from "pg";
import { auditEpochTransition } from "@/lib/audit/append";
import { createListener } from "@/lib/db/listener";
import { queuedAdmission } from "@/lib/engine/admission";
import { followDatabaseIdentity, identityChangeReason } from "@/lib/engine/epoch-identity";
import { beginInvocation, observeEffectAbsent, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { postLateObservation } from "@/lib/engine/late-observation";
import { claimSteps, releaseLease, renewLeases } from "@/lib/engine/lease";
import { acquirePermit, holdPermit, releasePermit, sweepPermits } from "@/lib/engine/permit";
import { commitReceipts } from "@/lib/engine/receipt";
import { reportFailure, runRecoveryScan } from "@/lib/engine/recovery";
import { DUE_NOW_CHANNEL, parkStep, settleDue } from "@/lib/engine/waits";
import { dueWork, waitRooms } from "@/lib/waits/rooms";
import { retentionSummary, runScheduledRetention, type RetentionSchedule } from "@/lib/engine/retention";
import { heartbeatSession, registerWorkerSession, stopSession } from "@/lib/engine/session";
import type { ClaimedStep, WorkflowVersion } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";

const READY_CHANNEL = "fenceline_step_ready";

/** How the direct coordinator runs the epoch transition that a changed database identity calls for. */
export type DirectCoordinatorOptions = {
  /** How long in-flight attempts get to finish when a changed database identity starts an epoch transition. */
  readonly epochDrainTimeoutMs?: number;
  /** Who such a transition is audited as requested by; default `coordinator:<FENCELINE_PROCESS or pid>`. */
  readonly requestedBy?: string;
  /**
   * Holds the LISTEN connection: a session of its own, so behind a pooler in transaction mode it
   * must be a direct pool (lib/db/pool.ts sessionPoolOf); by default `pool`.
   */
  readonly listenPool?: Pool;
  /**
   * Runs the retention job on this schedule (lib/engine/retention.ts runScheduledRetention),
   * offered with the recovery passes at most once a minute; whichever coordinator claims a due
   * run does it. Unset: never (tests, and deployments that run `npm run retention` from cron).
   */
  readonly retention?: RetentionSchedule | null;
  /** How often a keeper looks again when nothing it knows of is due sooner; default `KEEPER_LOOK_AGAIN_MS`. */
  readonly keeperLookAgainMs?: number;
  /** Called each time a keeper goes to sleep after a pass: a checkpoint tests wait on, a no-op otherwise. */
  readonly keeperAsleep?: () => void;
};

/** How often one coordinator offers to run the scheduled retention job: a claim that is not due matches no row. */
const RETENTION_OFFER_EVERY_MS = 60_000;
/**
 * A keeper looks again at least this often when nothing it knows of is due sooner: a wait armed
 * through another process (whose keepers know of it) is then still fired by this one in time, and
 * work made due while the LISTEN was down (its notice lost) is settled all the same.
 */
const KEEPER_LOOK_AGAIN_MS = 1_000;

/** A coordinator on `pool`; closing it waits for an epoch transition it is running. */
export function directCoordinator(pool: Pool, options: DirectCoordinatorOptions = {}): Coordinator {
  const listenPool = options.listenPool ?? pool;
  const keeperLookAgainMs = options.keeperLookAgainMs ?? KEEPER_LOOK_AGAIN_MS;
  let following: Promise<void> | null = null;
  const followIdentity = () => {
    following ??= followDatabaseIdentity(pool, {
      requestedBy: options.requestedBy ?? `coordinator:${process.env.FENCELINE_PROCESS ?? process.pid}`,
      drainTimeoutMs: options.epochDrainTimeoutMs,
      recordOutcome: auditEpochTransition,
      lockPool: listenPool,
    })
      .then((followed) => {
        if (!followed) return;
        const { check, transition } = followed;
        process.stderr.write(
          `FENCELINE_EPOCH_FOLLOWED ${identityChangeReason(check.recorded, check.current)}: epoch ${transition.fromEpoch} → ${transition.toEpoch} ${transition.state}\n`,
        );
      })
      // A database that does not answer fails the next check too; the next pass tries again.
      .catch((error: unknown) => void process.stderr.write(`[coordinator] database identity check failed: ${error instanceof Error ? error.message : String(error)}\n`))
      .finally(() => {
        following = null;
      });
  };
  let retaining: Promise<void> | null = null;
  let retentionOfferedAt = -Infinity;
  const offerRetention = () => {
    const schedule = options.retention;
    if (!schedule || retaining || performance.now() - retentionOfferedAt < RETENTION_OFFER_EVERY_MS) return;
    retentionOfferedAt = performance.now();
    retaining = runScheduledRetention(pool, schedule)
      .then((report) => {
        if (report) process.stderr.write(`FENCELINE_RETENTION ${JSON.stringify(retentionSummary(report))}\n`);
      })
      // A lock wait past the job's timeout, or a database that does not answer: the claim was
      // cleared, so the next offer (from any coordinator) tries again.
      .catch((error: unknown) => void process.stderr.write(`[coordinator] scheduled retention failed: ${error instanceof Error ? error.message : String(error)}\n`))
      .finally(() => {
        retaining = null;
      });
  };
  const admitQueued = queuedAdmission(pool);
  const waiters = new Set<() => void>();
  // A notification that arrives while no one waits (a claim is in flight, and its snapshot may
  // predate the new step) is kept for the next wait, which then returns at once instead of
  // sleeping until its timeout.
  let missed = false;
  // Notifications received so far, and per session how many there were when its last claim began,
  // if that claim took fewer steps than it asked for while the listener was up: see claimOrWait.
  let notices = 0;
  const drainedAt = new Map<string, number>();
  const wakeAll = () => {
    notices += 1;
    if (waiters.size === 0) missed = true;
    for (const wake of waiters) wake();
    waiters.clear();
  };
  // Keepers asleep until the next due time; a wait armed through this coordinator wakes them,
  // since it may be due before what they sleep for, and so does a notice on DUE_NOW_CHANNEL.
  // `dueNotices` counts the notices: one that arrives during a pass (whose snapshot may predate
  // what it announces) sends the keeper round again instead of to sleep.
  const keepers = new Set<() => void>();
  let dueNotices = 0;
  const wakeKeepers = () => {
    dueNotices += 1;
    for (const wake of keepers) wake();
    keepers.clear();
  };
  // A lost listener costs only latency: waits fall back to their timeout until it reconnects,
  // which wakes everyone, since a step readied meanwhile sent its notice to no one. Each new
  // connection is a new generation: a claim noted as up to date must have begun and ended on one.
  let generation = 0;
  const wakeUps = createListener(listenPool, {
    channels: [READY_CHANNEL, DUE_NOW_CHANNEL],
    onNotification: (message) => (message.channel === DUE_NOW_CHANNEL ? wakeKeepers() : wakeAll()),
    onListening: ({ reconnected }) => {
      generation += 1;
      drainedAt.clear();
      if (reconnected) {
        wakeAll();
        wakeKeepers();
      }
    },
  });

  /** Claims, noting whether the claim saw every step ready before it began (it took fewer than `limit`). */
  const claimNoting = async (sessionId: string, served: readonly WorkflowVersion[], limit: number): Promise<ClaimedStep[]> => {
    const generationAtStart = wakeUps.listening ? generation : null;
    const noticesAtStart = notices;
    const claimed = await claimSteps(pool, sessionId, served, limit);
    if (generationAtStart !== null && wakeUps.listening && generation === generationAtStart && claimed.length < limit) {
      // Forgetting is always safe (the next wait claims first): keep the map small.
      if (drainedAt.size >= 1_000) drainedAt.clear();
      drainedAt.set(sessionId, noticesAtStart);
    } else {
      drainedAt.delete(sessionId);
    }
    return claimed;
  };

  const keeperSleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        keepers.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      keepers.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });

  let closed = false;
  const waitForWork = async (timeoutMs: number, signal?: AbortSignal): Promise<void> => {
    await wakeUps.ready();
    if (missed) {
      missed = false;
      return;
    }
    if (signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      waiters.add(done);
      signal?.addEventListener("abort", done);
    });
  };

  return {
    transport: "direct",
    registerSession: (registration) => {
      followIdentity();
      offerRetention();
      return registerWorkerSession(pool, { transport: "direct", registration });
    },
    heartbeat: (sessionId) => heartbeatSession(pool, sessionId),
    stopSession: (sessionId, reason) => {
      drainedAt.delete(sessionId);
      return stopSession(pool, sessionId, reason);
    },
    claim: (sessionId, served, limit) => claimNoting(sessionId, served, limit),
    claimOrWait: async (sessionId, served, limit, waitMs, signal) => {
      const deadline = performance.now() + waitMs;
      const stopped = () => closed || signal?.aborted === true;
      // Up to date: the session's last claim took fewer than it asked for and no notification has
      // arrived since it began. Every step ready before it began was in its snapshot, and a step
      // made ready since notifies once its change commits, so a claim now would find nothing new:
      // wait first. (Work that needs no notification, a delayed step coming due, is found at the
      // wait's timeout either way.)
      const upToDate = waitMs > 0 && wakeUps.listening && drainedAt.get(sessionId) === notices;
      let claimed = upToDate ? [] : await claimNoting(sessionId, served, limit);
      // A wake-up is a hint (another session's work, a notice from before the claim): answer
      // empty only at the timeout. A stopping worker (or a closed coordinator) claims nothing more.
      while (claimed.length === 0 && limit > 0 && deadline - performance.now() > 0 && !stopped()) {
        await waitForWork(deadline - performance.now(), signal);
        if (!stopped()) claimed = await claimNoting(sessionId, served, limit);
      }
      return claimed;
    },
    renew: (sessionId, requests) => renewLeases(pool, sessionId, requests),
    persistRequestIdentity: (lease, proposed, adapterVersion) => persistRequestIdentity(pool, lease, proposed, adapterVersion),
    beginInvocation: (lease) => beginInvocation(pool, lease),
    observeResponse: (lease, externalReference, result) => observeResponse(pool, lease, externalReference, result),
    observeEffectAbsent: (lease, answer) => observeEffectAbsent(pool, lease, answer),
    acquirePermit: (lease, request) => acquirePermit(pool, lease, request),
    releasePermit: (permitId) => releasePermit(pool, permitId),
    holdPermit: (permitId, reason, holdMs) => holdPermit(pool, permitId, reason, holdMs),
    commitReceipts: (sessionId, requests) => commitReceipts(pool, sessionId, requests),
    commitAndClaim: async (sessionId, served, requests, claimLimit) => {
      const results = await commitReceipts(pool, sessionId, requests);
      return { results, claimed: claimLimit > 0 ? await claimNoting(sessionId, served, claimLimit) : [] };
    },
    reportFailure: async (lease, reason) => {
      await reportFailure(pool, lease, reason);
    },
    release: (lease, reason, options) => releaseLease(pool, lease, reason, options),
    postLateObservation: async (lease, observation) => {
      await postLateObservation(pool, lease, observation);
    },
    park: async (lease, wait, reason) => {
      const armed = await parkStep(pool, waitRooms, lease, wait, reason);
      if (armed.dueAt) wakeKeepers();
      return armed;
    },
    settleDue: async (limit, waitMs, signal) => {
      const deadline = performance.now() + waitMs;
      const stopped = () => closed || signal?.aborted === true;
      // Up to date with the due notices once the LISTEN is in effect: one sent before it is lost.
      await wakeUps.ready();
      for (;;) {
        const noticesAtStart = dueNotices;
        const { settled, nextDueInMs } = await settleDue(pool, dueWork, limit);
        const remainingMs = deadline - performance.now();
        if (settled > 0 || remainingMs <= 0 || stopped()) return settled;
        if (dueNotices !== noticesAtStart) continue;
        // Due already (the pass met rows other keepers held): look again soon rather than at once.
        const sleepMs = nextDueInMs === null ? keeperLookAgainMs : Math.max(nextDueInMs, 5);
        const sleeping = keeperSleep(Math.min(sleepMs, keeperLookAgainMs, remainingMs), signal);
        options.keeperAsleep?.();
        await sleeping;
        if (stopped()) return 0;
      }
    },
    recover: async (decidedBy, batchSize) => {
      followIdentity();
      offerRetention();
      return (await runRecoveryScan(pool, { decidedBy, batchSize })).length + (await sweepPermits(pool, batchSize)) + (await admitQueued());
    },
    waitForWork: (timeoutMs) => waitForWork(timeoutMs),
    close: async () => {
      closed = true;
      wakeAll();
      wakeKeepers();
      await following;
      await retaining;
      await wakeUps.close();
    },
  };
}
