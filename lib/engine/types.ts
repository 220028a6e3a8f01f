import type { AttemptMode, RenewalRefusalReason } from "./vocabulary";

/** What a worker presents to prove authority: the step, the fencing term it holds, its session. */
export type LeaseHandle = {
  readonly stepId: string;
  readonly fencingTerm: bigint;
  readonly sessionId: string;
};

export type ClaimedStep = {
  readonly stepId: string;
  readonly workflowId: string;
  readonly attemptId: string;
  readonly fencingTerm: bigint;
  readonly epoch: bigint;
  readonly mode: AttemptMode;
  /** Set when an earlier attempt already persisted the step's request identity. */
  readonly requestIdentity: string | null;
  readonly input: unknown;
  readonly inputDigest: string;
  readonly adapter: string;
  readonly operation: string;
  readonly stepClass: string;
  readonly attemptsStarted: number;
  readonly attemptBudget: number;
  readonly leaseTtlMs: number;
  readonly renewEveryMs: number;
  /** The step class's attempt deadline: how long one attempt's authority may last in all. */
  readonly attemptDeadlineMs: number;
  /** Time kept after the last possible expiry (deadline − grace) to record a timeout observation. */
  readonly graceMs: number;
  readonly deadlineAt: Date;
  readonly expiresAt: Date;
  readonly checkpointVersion: number;
  /** The database clock when the claim committed; expiresAt − dbNow is the authority remaining. */
  readonly dbNow: Date;
};

export type RenewRequest = LeaseHandle & { readonly checkpointVersion: number };

export type RenewResult =
  | { readonly stepId: string; readonly renewed: true; readonly expiresAt: Date; readonly dbNow: Date }
  | { readonly stepId: string; readonly renewed: false; readonly reason: RenewalRefusalReason };
