/**
 * One attempt as its worker runs it, and the lease that authorises it.
 *
 * States, as the worker sees them:
 *  - holding: the last claim or renewal was granted and its local bound has not passed;
 *  - uncertain: a renewal's outcome is unknown (the request failed in transit); no new effect
 *    boundary may be crossed until a later renewal is granted;
 *  - lost: a renewal or fenced write was refused, or the local bound passed without a granted
 *    renewal, or the worker is stopping. The signal fires and never un-fires.
 *
 * Only the database decides expiry. The local bound uses this process's monotonic clock,
 * measured from when the request was sent, so it can only end authority earlier than the
 * database would, never later. Renewals and checkpoints of one lease are serialised, because a
 * renewal must present the lease's current checkpoint version.
 */
import type { ClaimedStep, LeaseHandle } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";
import { AttemptTrace } from "./tracing";

export class AuthorityUncertainError extends Error {
  readonly code = "authority_uncertain";
}

export class AttemptRun {
  readonly lease: LeaseHandle;
  readonly controller = new AbortController();
  checkpointVersion: number;
  invocationBegan = false;
  /** The attempt's spans (no-ops when nothing traces). */
  readonly trace: AttemptTrace;
  private uncertain = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private lapseTimer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly safetyMarginMs: number;

  constructor(
    readonly step: ClaimedStep,
    sessionId: string,
    private readonly coordinator: Coordinator,
    private readonly claimSentAtMs: number,
    private readonly log: (line: string) => void,
  ) {
    this.lease = { stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId };
    this.checkpointVersion = step.checkpointVersion;
    this.trace = new AttemptTrace(step);
    this.safetyMarginMs = Math.min(500, Math.floor(step.leaseTtlMs / 5));
    this.holdUntil(claimSentAtMs, step.expiresAt, step.dbNow);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The longest an attempt of this step class may work: attempt deadline, less grace and margin. */
  get authorityWindowMs(): number {
    return this.step.attemptDeadlineMs - this.step.graceMs - this.safetyMarginMs;
  }

  /** Local time by which the handler must have finished: the last possible expiry, minus margin. */
  handlerDeadlineMs(): number {
    const lastExpiry = this.step.deadlineAt.getTime() - this.step.graceMs;
    return this.claimSentAtMs + (lastExpiry - this.step.dbNow.getTime()) - this.safetyMarginMs;
  }

  startRenewing(): void {
    const tick = () => {
      this.renewTimer = setTimeout(() => {
        void this.serialize(() => this.renewOnce()).finally(() => {
          if (!this.signal.aborted) tick();
        });
      }, this.step.renewEveryMs);
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.renewTimer);
    clearTimeout(this.lapseTimer);
  }

  lose(reason: string): void {
    if (!this.signal.aborted) this.controller.abort(new Error(reason));
    this.stop();
  }

  /** Throws unless the worker may cross an effect boundary now. */
  assertHolding(): void {
    if (this.signal.aborted) throw this.signal.reason instanceof Error ? this.signal.reason : new AuthorityUncertainError("authority lost");
    if (this.uncertain) throw new AuthorityUncertainError("lease renewal outcome unknown: not crossing an effect boundary");
  }

  /** Runs work on this lease after every earlier renewal or checkpoint of it has finished. */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async renewOnce(): Promise<void> {
    if (this.signal.aborted) return;
    const sentAt = performance.now();
    try {
      const [result] = await this.coordinator.renew(this.lease.sessionId, [
        { ...this.lease, checkpointVersion: this.checkpointVersion },
      ]);
      if (result?.renewed) {
        this.uncertain = false;
        this.holdUntil(sentAt, result.expiresAt, result.dbNow);
      } else {
        this.lose(`lease renewal refused: ${result && !result.renewed ? result.reason : "no answer"}`);
      }
    } catch (error) {
      this.uncertain = true;
      this.log(`renewal of ${this.lease.stepId} term ${this.lease.fencingTerm} has an unknown outcome: ${String(error)}`);
    }
  }

  private holdUntil(sentAtMs: number, expiresAt: Date, dbNow: Date): void {
    clearTimeout(this.lapseTimer);
    const remainingMs = expiresAt.getTime() - dbNow.getTime() - this.safetyMarginMs;
    const lapseInMs = Math.max(0, sentAtMs + remainingMs - performance.now());
    this.lapseTimer = setTimeout(() => this.lose("lease may have expired: no renewal granted in time"), lapseInMs);
  }
}
