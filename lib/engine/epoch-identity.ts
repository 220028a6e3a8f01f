/**
 * A failover is a restore in miniature. A standby promoted after its primary died may lack the
 * primary's last commits (asynchronous replication): fencing terms handed out just before can be
 * handed out again, and the clock moves to another host. Every epoch records the identity of the
 * database it was opened on (system identifier and timeline, stamped by the insert itself); a
 * coordinator compares it with the server's on start and with every recovery scan, and when they
 * differ it runs an epoch transition exactly as after a restore, with the change as its reason.
 */
import type { Pool } from "pg";
import { run } from "./db";
import { runEpochTransition, type TransitionOptions, type TransitionResult } from "./epoch";
import { registeredEpochDestinations } from "./epoch-admin";
import { TransitionInProgressError } from "./errors";
import * as sql from "./sql/epoch-identity";

/** A database's identity: pg_control_system()'s system identifier and the timeline it writes on. */
export type DatabaseIdentity = { readonly system: string; readonly timeline: number };

export type IdentityCheck = {
  readonly epoch: string;
  /** Recorded with the current epoch when it opened. */
  readonly recorded: DatabaseIdentity;
  /** The server's, now. */
  readonly current: DatabaseIdentity;
  readonly changed: boolean;
};

type IdentityRow = { epoch: string; recorded_system: string; recorded_timeline: number; system: string; timeline: number };

export async function checkDatabaseIdentity(pool: Pick<Pool, "query">): Promise<IdentityCheck> {
  const [row] = await run<IdentityRow>(pool, sql.databaseIdentity, []);
  const { epoch, recorded_system, recorded_timeline, system, timeline } = row!;
  const recorded = { system: recorded_system, timeline: recorded_timeline };
  const current = { system, timeline };
  return { epoch, recorded, current, changed: recorded.system !== current.system || recorded.timeline !== current.timeline };
}

/** The transition's reason, e.g. "database identity changed: system 7714… timeline 1 → 2". */
export function identityChangeReason(recorded: DatabaseIdentity, current: DatabaseIdentity): string {
  const system = recorded.system === current.system ? `system ${current.system}` : `system ${recorded.system} → ${current.system}`;
  return `database identity changed: ${system} timeline ${recorded.timeline} → ${current.timeline}`;
}

export type FollowOptions = Pick<TransitionOptions, "requestedBy" | "drainTimeoutMs" | "recordOutcome"> & {
  /**
   * Where the session advisory lock is held: a connection of its own for the whole transition, so
   * behind a pooler in transaction mode a direct pool (lib/db/pool.ts sessionPoolOf), or the lock
   * and its unlock could land on different server connections; by default `pool`.
   */
  readonly lockPool?: Pool;
};

export type FollowResult = { readonly check: IdentityCheck; readonly transition: TransitionResult };

/**
 * Checks the identity and, when it changed, runs the epoch transition at every registered fenced
 * destination (null when nothing changed, or another process is already acting on the change).
 * A transition that fails is abandoned by runEpochTransition; the identity still differs, so the
 * next check tries again.
 */
export async function followDatabaseIdentity(pool: Pool, { lockPool = pool, ...options }: FollowOptions): Promise<FollowResult | null> {
  if (!(await checkDatabaseIdentity(pool)).changed) return null;
  const client = await lockPool.connect();
  let broken: Error | undefined;
  try {
    const [lock] = await run<{ locked: boolean }>(client, sql.tryIdentityLock, []);
    if (!lock?.locked) return null;
    try {
      const check = await checkDatabaseIdentity(client);
      if (!check.changed) return null;
      await run(client, sql.abandonOrphanedTransition, [`left open by a failover: ${identityChangeReason(check.recorded, check.current)}`]);
      const transition = await runEpochTransition(pool, {
        ...options,
        reason: identityChangeReason(check.recorded, check.current),
        destinations: await registeredEpochDestinations(pool),
      });
      return { check, transition };
    } catch (error) {
      if (error instanceof TransitionInProgressError) return null;
      throw error;
    } finally {
      await run(client, sql.releaseIdentityLock, []).catch((error: Error) => (broken = error));
    }
  } finally {
    client.release(broken);
  }
}
