/**
 * Shared vocabulary of the fault-scenario harness: the faults, the destination contracts they run
 * against, the timing every cell uses, and the figures a cell reports.
 */

export const FAULTS = [
  /** SIGKILL a worker at each named checkpoint (one victim per checkpoint). */
  "kill",
  /** SIGSTOP a worker while its request is in flight, past the lease TTL, then SIGCONT. */
  "pause",
  /** The destination commits the effect and drops the response. */
  "drop-response",
  /** pg_terminate_backend of every worker connection, repeatedly, while work is in flight. */
  "conn-kill",
  /** Restart the engine's PostgreSQL (a throwaway cluster) while work is in flight. */
  "db-restart",
  /** Workers whose wall clock is ±2×TTL off (libfaketime), one of them paused past its TTL. */
  "clock-offset",
  /** Several workers scan for the same expired leases at once. */
  "dup-recoverers",
  /**
   * Requests with a timer and an event wait: a coordinator killed and PostgreSQL restarted around
   * the timers' due times, events sent before their waits begin, while they wait, twice, and racing
   * their timeouts. No timer fires twice, early or never; no event is consumed twice or lost.
   */
  "waits",
  /**
   * Every-second schedules while the keeper in the middle of a firing pass is SIGKILLed: first
   * with a peer keeper running (two fired at once before), then the last keeper, replaced by a
   * standby process. No due time starts twice, early, or is missed within its catch-up policy.
   */
  "schedule-takeover",
  /**
   * Requests whose delivery declares an undo are cancelled after it: one worker SIGKILLed at each
   * checkpoint of an undo, a rescuer finishing them (lib/compensation). No undo applies twice at a
   * fenced or idempotent destination; an unknown one at an opaque destination is in review.
   */
  "undo",
  /**
   * Requests whose delivery declares an undo are cancelled after it, and the destination commits
   * each undo and drops its answer. Fenced and idempotent undos apply once and their requests end
   * cancelled; an opaque one is in review and its request stays cancelling, never counted undone.
   */
  "undo-drop-response",
  /**
   * Restore the engine's database from a snapshot and let a stale worker act: the fenced
   * destination accepts its write without an epoch transition, and refuses it with one.
   */
  "restore",
  /**
   * Kill the engine database's primary under traffic (SIGKILL) and promote its streaming standby
   * (pg_basebackup + pg_ctl promote); synchronous replication: nothing acknowledged may be lost.
   */
  "failover-sync",
  /** The same with asynchronous replication and a standby held behind: what is lost is counted and explained. */
  "failover-async",
  /**
   * The same two under a real failover manager: two Patroni agents and a one-member etcd; the
   * leader's agent and postmaster SIGKILLed (a dead machine), Patroni promotes the replica after
   * its leader key's TTL.
   */
  "failover-patroni-sync",
  "failover-patroni-async",
] as const;
export type FaultKind = (typeof FAULTS)[number];

export const CONTRACTS = ["fenced", "idempotent", "queryable", "opaque"] as const;
export type Contract = (typeof CONTRACTS)[number];

/** The failover cells, both tiers. */
export const isFailover = (fault: FaultKind): boolean => fault.startsWith("failover-");

/** A failover cell's tier: the harness promotes by hand (quick) or Patroni does. */
export const failoverTier = (fault: FaultKind): "quick" | "patroni" => (fault.startsWith("failover-patroni-") ? "patroni" : "quick");

/** A failover cell's replication mode. */
export const isSynchronousFailover = (fault: FaultKind): boolean => fault.endsWith("-sync");

/**
 * The restore drill is about fencing terms, which only the fenced destination checks. The waits
 * and schedule-takeover cells are about the waits and the firings, not the delivery after them:
 * two contracts are enough. The
 * failover cells run where a repeated request is harmless (fenced and idempotent destinations):
 * a queryable or opaque one cannot tell a request the lost commits made from its repeat. An undo
 * whose answer is lost at a queryable destination is reconciled by the status query as any step's
 * is (the drop-response cell): that cell runs where the undo is retried or goes to review.
 */
export const appliesTo = (fault: FaultKind, contract: Contract): boolean =>
  fault === "restore"
    ? contract === "fenced"
    : isFailover(fault) || fault === "waits" || fault === "schedule-takeover"
      ? contract === "fenced" || contract === "idempotent"
      : fault === "undo-drop-response"
        ? contract !== "queryable"
        : true;

export const isFault = (value: string): value is FaultKind => (FAULTS as readonly string[]).includes(value);
export const isContract = (value: string): value is Contract => (CONTRACTS as readonly string[]).includes(value);

/** Lease policy and worker cadence of every cell: short, so a cell takes seconds. */
export const TIMING = {
  leaseTtlMs: 1_500,
  renewEveryMs: 500,
  attemptDeadlineMs: 20_000,
  graceMs: 500,
  scanIntervalMs: 500,
  pollIntervalMs: 200,
  /** The scan interval carries ±10 % jitter; this covers the scan's own transaction and a busy box. */
  slackMs: 300,
} as const;

/** Worst case from the last renewal before a fault to the recovery decision, on the database clock. */
export const recoveryBoundMs = (): number => Math.round(TIMING.leaseTtlMs + TIMING.scanIntervalMs * 1.1 + TIMING.slackMs);

/** One invariant's verdict with a few witnesses when it failed. */
export type InvariantResult = {
  id: number;
  name: string;
  passed: boolean;
  violations: number;
  witnesses: unknown[];
};

export type LatencySummary = { samples: number; p50: number | null; p99: number | null; max: number | null; bound: number };

export type Figures = {
  workflows: number;
  faultsInjected: Record<string, number>;
  staleWritesRejected: number;
  staleWritesAccepted: number;
  duplicateEffects: number;
  lostRequests: number;
  unknownOutsideReview: number;
  recoveryLatencyMs: LatencySummary;
};

export type CellResult = Figures & {
  fault: FaultKind;
  contract: Contract;
  seed: number;
  passed: boolean;
  /** Why the cell failed, in a sentence or two (invariants, expectations, harness errors). */
  failures: string[];
  invariants: InvariantResult[];
  durationMs: number;
  /** Outcome figures for the reader: step states, recovery categories, destination effects. */
  detail: Record<string, unknown>;
  /** The command that runs this cell again with the same seed. */
  replay: string;
  /** Raw recovery latencies (ms), for percentiles across cells. */
  latencySamples: number[];
};
