/**
 * The scorecard's vocabulary: the engines it compares, the faults every run injects in the same
 * order, what one logical job ends as (the destination's count and the engine's own word), and
 * the figures a run reports per contract.
 */
import type { Contract } from "@/lib/scenarios/types";

export const SCORECARD_ENGINES = ["fenceline", "graphileWorker", "pgBoss", "dbos"] as const;
export type ScorecardEngine = (typeof SCORECARD_ENGINES)[number];

/** How the table names each engine. */
export const ENGINE_LABEL: Record<ScorecardEngine, string> = {
  fenceline: "Fenceline",
  graphileWorker: "graphile-worker",
  pgBoss: "pg-boss",
  dbos: "DBOS Transact",
};

/**
 * The faults, in the order every run injects them, each to its own batch of jobs:
 *
 *   answer-lost  the destination applies each job's first request and drops its answer
 *   sigkill      the worker is SIGKILLed while every call of the batch is in flight; a supervisor
 *                restarts it a second later (as systemd or Kubernetes would)
 *   db-restart   the engine's PostgreSQL stops (-m immediate) while the calls are in flight, stays
 *                down a second and starts again
 *   pause        the worker is SIGSTOPped while its calls are held at the destination, past every
 *                lease and visibility timeout in the bench; a second worker starts; the held calls
 *                land; the first worker resumes (SIGCONT)
 */
export const SCORECARD_FAULTS = ["answer-lost", "sigkill", "db-restart", "pause"] as const;
export type ScorecardFault = (typeof SCORECARD_FAULTS)[number];

/** What the engine itself says of a job when the run ends. */
export type EngineOutcome =
  /** Done, as far as the engine knows. */
  | "completed"
  /** Given up and left for an operator: a Fenceline review case, a peer's job failed for good. */
  | "withPerson"
  /** Neither: still queued, locked, running or waiting for a retry when the run ended. */
  | "unsettled";

/** One logical job: what it sends and how the engine and the destination know it. */
export type LogicalJob = {
  /** Unique within a run. */
  readonly n: number;
  readonly contract: Contract;
  readonly fault: ScorecardFault;
  /** The effect's body: the destination keeps its digest with every effect it applies. */
  readonly payload: { readonly scorecard: string; readonly job: number };
};

/** A run's figures for one contract, all of them counted at the destination except where noted. */
export type ContractFigures = {
  readonly contract: Contract;
  readonly jobs: number;
  /** Jobs by the number of effects the destination applied for them. */
  readonly applied: { readonly none: number; readonly once: number; readonly more: number };
  /** Effects beyond the first, summed over jobs. */
  readonly duplicateEffects: number;
  /** Fenced destination: writes refused as stale (409), and accepted under a term not newer than the resource's last. */
  readonly staleWritesRejected: number;
  readonly staleWritesAccepted: number;
  /** Engine's word: jobs left for a person (Fenceline: open review case; a peer: failed for good). */
  readonly withPerson: number;
  /** Never applied at the destination and never reported (the engine says completed, or still has it when the run ends). */
  readonly lost: number;
  /** Engine's word: jobs neither completed nor with a person when the run ended. */
  readonly unsettled: number;
  /**
   * The longest time, over the faults, from a fault until the engine had settled (completed or left
   * with a person) every job of this contract in that fault's batch; null when one batch had not
   * settled within its window.
   */
  readonly settleMs: number | null;
  /** Jobs by engine outcome × effects applied (0, 1, 2+), for the reader. */
  readonly outcomes: Record<EngineOutcome, readonly [number, number, number]>;
};

/** One fault's batch: how long from the fault until the engine had settled every job of it. */
export type FaultFigures = {
  readonly fault: ScorecardFault;
  readonly jobs: number;
  /** Per contract: ms from the fault to the engine settling that contract's jobs of the batch; null when it had not within the window. */
  readonly settledMs: Partial<Record<Contract, number | null>>;
  readonly windowMs: number;
  /** Per contract: jobs of the batch with 2+ effects, and with none (never applied). */
  readonly duplicatedBy: Partial<Record<Contract, number>>;
  readonly neverAppliedBy: Partial<Record<Contract, number>>;
  /** What the harness did, to show the fault happened (e.g. answers dropped, calls in flight at the kill). */
  readonly injected: Record<string, number>;
  /** Worker processes that exited by themselves during the batch (the harness's SIGKILL not counted); the supervisor restarted them. */
  readonly workerCrashes: number;
};

export type RunResult = {
  readonly engine: ScorecardEngine;
  readonly seed: number;
  readonly settings: string;
  readonly contracts: readonly ContractFigures[];
  readonly faults: readonly FaultFigures[];
  /** Effects whose payload matched no job of the run (must be 0: the count would be unsound). */
  readonly unattributedEffects: number;
  /** Worker processes the supervisor restarted after they exited unasked (SIGKILL, crash). */
  readonly workerRestarts: number;
  readonly durationMs: number;
  /** Harness problems (a fault that could not be placed, a worker that never became ready). */
  readonly problems: readonly string[];
};
