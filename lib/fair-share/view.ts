/**
 * What engineers read of fair share: per concurrency key, the steps ready to claim, queued behind
 * the key's limit, in flight, and how long its oldest ready step has waited; per destination with
 * a declared rate, the calls of the last second against the rate and the steps waiting for a call
 * slot; and each kind's settings. Read from the read pool; counts are of now, not history.
 */
import type { StaffReadable } from "@/lib/db/read-pool-types";
import type { Fairness } from "@/lib/definitions/workflow";
import { run } from "@/lib/engine/db";
import { listFairShare, type KindFairShare } from "./settings";
import * as sql from "./sql";

/** Keys shown by their work now, busiest first; the rest are counted. */
export const BUSIEST_KEYS = 50;
/** Keys shown by how long they have waited. */
export const LONGEST_WAITING_KEYS = 10;

export type KeyLoad = {
  readonly kind: string;
  readonly key: string;
  /** Ready to be claimed now or after a short wait (no lease held). */
  readonly ready: number;
  /** Waiting behind the key's limit on steps in flight. */
  readonly queued: number;
  /** Leased: a worker holds them now. */
  readonly inFlight: number;
  /** Steps holding one of the key's admissions (ready, leased or waiting to retry); counted only under a limit. */
  readonly admitted: number;
  readonly limitPerKey: number | null;
  readonly fairness: Fairness;
  /** When its oldest ready step (queued or not) became ready; null when none is. */
  readonly waitingSince: string | null;
  readonly waitingMs: number | null;
};

export type DestinationRate = {
  readonly adapter: string;
  readonly perSecond: number;
  readonly burst: number;
  /** The adapter version whose registration declared it. */
  readonly declaredBy: string;
  /** Call slots used in the last second of the database clock. */
  readonly callsLastSecond: number;
  /** Calls under way (permits counted against its concurrency limit). */
  readonly inFlight: number;
  /** Steps told to wait for a call slot, without a lease. */
  readonly waiting: number;
};

export type FairShareView = {
  readonly dbNow: string;
  /** Keys with ready or leased steps, in all. */
  readonly activeKeys: number;
  readonly busiest: KeyLoad[];
  readonly waitingLongest: KeyLoad[];
  readonly destinations: DestinationRate[];
  readonly kinds: KindFairShare[];
};

type KeyRow = {
  kind: string;
  key: string;
  ready: number;
  queued: number;
  in_flight: number;
  admitted: number;
  waiting_since: Date | null;
  busiest: boolean;
  longest: boolean;
  limit_per_key: number | null;
  fairness: Fairness;
  keys: number;
  db_now: Date;
};

type DestinationRow = { adapter: string; per_second: number; burst: number; declared_by: string; calls_last_second: number; in_flight: number; waiting: number };

export async function readFairShare(pool: StaffReadable): Promise<FairShareView> {
  const [keyRows, destinations, kinds, [clock]] = await Promise.all([
    run<KeyRow>(pool, sql.activeKeys, [BUSIEST_KEYS, LONGEST_WAITING_KEYS]),
    run<DestinationRow>(pool, sql.destinationRates, []),
    listFairShare(pool),
    run<{ db_now: Date }>(pool, { name: "fl_fair_share_db_now", text: "SELECT now() AS db_now" }, []),
  ]);
  const dbNow = clock!.db_now;
  const load = (row: KeyRow): KeyLoad => ({
    kind: row.kind,
    key: row.key,
    ready: row.ready,
    queued: row.queued,
    inFlight: row.in_flight,
    admitted: row.admitted,
    limitPerKey: row.limit_per_key,
    fairness: row.fairness,
    waitingSince: row.waiting_since?.toISOString() ?? null,
    waitingMs: row.waiting_since ? Math.max(0, dbNow.getTime() - row.waiting_since.getTime()) : null,
  });
  return {
    dbNow: dbNow.toISOString(),
    activeKeys: keyRows[0]?.keys ?? 0,
    busiest: keyRows.filter((row) => row.busiest).map(load),
    waitingLongest: keyRows.filter((row) => row.longest).map(load),
    destinations: destinations.map((row) => ({
      adapter: row.adapter,
      perSecond: row.per_second,
      burst: row.burst,
      declaredBy: row.declared_by,
      callsLastSecond: row.calls_last_second,
      inFlight: row.in_flight,
      waiting: row.waiting,
    })),
    kinds,
  };
}
