/**
 * Epoch transitions: after a restore or reset, term ordering is uncertain, so the fencing term
 * moves to a new epoch that every fenced destination learns before it accepts new work.
 *
 *   1. stop admitting work (an open transition stops every claim);
 *   2. reconcile in-flight attempts: wait for open leases to end, then revoke what is left, so
 *      recovery decides each from its evidence;
 *   3. open a new epoch, one above any the database or a destination has seen — a restored
 *      database may have forgotten epochs it opened, the destinations have not;
 *   4. install it at every fenced destination and prove there that a write from the previous
 *      epoch is refused;
 *   5. resume; a destination whose installation or proof failed stays blocked (its steps are not
 *      claimed) until a later transition succeeds there.
 */
import type { Pool, PoolClient } from "pg";
import { inTransaction, run } from "./db";
import { TransitionInProgressError } from "./errors";
import { revokeLease } from "./recovery";
import * as sql from "./sql/epoch";

/** What a transition needs from a fenced destination (lib/adapters/destinations.ts: fencedEpochAdmin). */
export type EpochDestination = {
  readonly adapter: string;
  state(): Promise<{ installed: bigint; highestSeen: bigint }>;
  install(epoch: bigint): Promise<{ installed: bigint }>;
  probeRejectsOlderThan(epoch: bigint): Promise<boolean>;
};

export type TransitionOptions = {
  readonly reason: string;
  readonly requestedBy: string;
  readonly destinations: readonly EpochDestination[];
  /** How long in-flight attempts get to finish before their leases are revoked. */
  readonly drainTimeoutMs?: number;
  /**
   * Called inside the transaction that records the transition's outcome, on its client: what it
   * writes commits with the outcome or not at all (the console keeps its audit entry this way).
   */
  readonly recordOutcome?: (client: PoolClient, outcome: TransitionOutcome) => Promise<void>;
};

export type DestinationResult = { readonly installed: true } | { readonly installed: false; readonly error: string };

export type TransitionResult = {
  readonly transitionId: string;
  readonly fromEpoch: bigint;
  readonly toEpoch: bigint;
  readonly revokedLeases: number;
  readonly destinations: Readonly<Record<string, DestinationResult>>;
  readonly state: "completed" | "blocked";
};

/** What recordOutcome is told: the result, with who asked and why. */
export type TransitionOutcome = TransitionResult & { readonly reason: string; readonly requestedBy: string };

const DRAIN_POLL_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runEpochTransition(pool: Pool, options: TransitionOptions): Promise<TransitionResult> {
  const [begun] = await run<{ id: string; from_epoch: string }>(pool, sql.beginTransition, [options.reason, options.requestedBy]);
  if (!begun) throw new TransitionInProgressError();
  const transitionId = begun.id;
  try {
    await run(pool, sql.advanceTransition, [transitionId, "reconciling"]);
    const revokedLeases = await reconcileInFlight(pool, transitionId, options.drainTimeoutMs ?? 10_000);

    const seen = await Promise.all(options.destinations.map(async (destination) => (await destination.state()).highestSeen));
    const [{ max }] = (await pool.query<{ max: string }>("SELECT max(id)::text AS max FROM epoch")).rows as [{ max: string }];
    const toEpoch = [BigInt(max), ...seen].reduce((a, b) => (a > b ? a : b)) + 1n;
    const [opened] = await run<{ to_epoch: string }>(pool, sql.openEpoch, [transitionId, toEpoch.toString()]);
    if (!opened) throw new Error(`epoch ${toEpoch} could not be opened`);

    const destinations: Record<string, DestinationResult> = {};
    for (const destination of options.destinations) destinations[destination.adapter] = await installAt(destination, toEpoch);
    const blocked = Object.entries(destinations).filter(([, result]) => !result.installed).map(([adapter]) => adapter);
    const installed = Object.entries(destinations).filter(([, result]) => result.installed).map(([adapter]) => adapter);
    return await inTransaction(pool, async (client) => {
      const [row] = await run<{ state: "completed" | "blocked" }>(client, sql.finishTransition, [
        transitionId,
        JSON.stringify(destinations),
        blocked,
        toEpoch.toString(),
        installed,
      ]);
      const result: TransitionResult = { transitionId, fromEpoch: BigInt(begun.from_epoch), toEpoch, revokedLeases, destinations, state: row!.state };
      await options.recordOutcome?.(client, { ...result, reason: options.reason, requestedBy: options.requestedBy });
      return result;
    });
  } catch (error) {
    await run(pool, sql.abandonTransition, [transitionId, String(error)]).catch(() => undefined);
    throw error;
  }
}

/** Waits for open leases to end, then revokes the rest; returns how many were revoked. */
async function reconcileInFlight(pool: Pool, transitionId: string, drainTimeoutMs: number): Promise<number> {
  const deadline = Date.now() + drainTimeoutMs;
  while (Date.now() < deadline) {
    if ((await run(pool, sql.openLeases, [1])).length === 0) return 0;
    await sleep(DRAIN_POLL_MS);
  }
  let revoked = 0;
  for (;;) {
    const open = await run<{ step_id: string }>(pool, sql.openLeases, [100]);
    if (open.length === 0) return revoked;
    for (const lease of open) {
      if (await revokeLease(pool, lease.step_id, `epoch transition ${transitionId}`, "epoch-transition")) revoked += 1;
    }
  }
}

async function installAt(destination: EpochDestination, epoch: bigint): Promise<DestinationResult> {
  try {
    const { installed } = await destination.install(epoch);
    if (installed < epoch) return { installed: false, error: `destination reports epoch ${installed} after installing ${epoch}` };
    if (!(await destination.probeRejectsOlderThan(epoch))) return { installed: false, error: `a write from epoch ${epoch - 1n} was accepted` };
    return { installed: true };
  } catch (error) {
    return { installed: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export type EpochStatus = {
  readonly epoch: string;
  readonly transition: { id: string; state: string; reason: string; startedAt: string } | null;
  readonly blocked: readonly { adapter: string; epoch: string; reason: string; since: string }[];
};

/** For the dashboard: the epoch in force, a transition under way, destinations still blocked. */
export async function epochStatus(pool: Pool): Promise<EpochStatus> {
  const [row] = await run<EpochStatus>(pool, sql.epochStatus, []);
  return row!;
}
