/**
 * The worker runtime: registers a session, claims steps with bounded concurrency, runs their
 * handlers, renews their leases, commits receipts in batches, and takes part in the recovery
 * scan. On stop it claims nothing more, releases work whose invocation has not begun, and gives
 * the rest a bounded time to finish; whatever is left is recovered from evidence after expiry.
 */
import { DefiniteFailure, RateLimited, StaleTermRejected } from "@/lib/adapters/call-outcome";
import { contractFor, type AdapterContract } from "@/lib/adapters/contract";
import { AuthorityLostError } from "@/lib/engine/errors";
import { HELD_PERMIT_FACTOR, isPermit, type Permit } from "@/lib/engine/permit";
import type { ClaimedStep } from "@/lib/engine/types";
import { AttemptRun } from "./attempt-run";
import type { Coordinator } from "./coordinator";
import {
  EffectAbsent,
  invalidOutcome,
  WaitRequested,
  type DestinationAnswer,
  type HandlerRegistry,
  type Invocation,
  type StatusAnswer,
  type StatusQuery,
  type StepContext,
  type StepOutcome,
} from "./handler";
import { noHooks, type CheckpointHooks } from "./hooks";
import { ReceiptBatcher } from "./receipt-batcher";

export type WorkerOptions = {
  readonly coordinator: Coordinator;
  readonly handlers: HandlerRegistry;
  /** Attempts run at once by this worker. */
  readonly concurrency?: number;
  /** Longest wait for new work when no notification arrives. */
  readonly pollIntervalMs?: number;
  readonly recoveryIntervalMs?: number;
  readonly recoveryBatchSize?: number;
  readonly heartbeatIntervalMs?: number;
  readonly shutdownTimeoutMs?: number;
  readonly receiptBatchSize?: number;
  readonly hooks?: CheckpointHooks;
  readonly log?: (line: string) => void;
};

const jitter = (ms: number) => ms * (0.9 + Math.random() * 0.2);
/** How long a step waits, without a lease, when its adapter has no free capacity. */
const NO_CAPACITY_WAIT_MS = 250;
const MAX_CAPACITY_WAIT_MS = 30_000;
/** A permit outlives its call's timeout by this much before a sweep may reclaim it. */
const PERMIT_MARGIN_MS = 1_000;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Worker {
  private readonly coordinator: Coordinator;
  private readonly handlers: HandlerRegistry;
  private readonly adapters: string[];
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly recoveryIntervalMs: number;
  private readonly recoveryBatchSize: number;
  private readonly heartbeatIntervalMs: number;
  private readonly shutdownTimeoutMs: number;
  private readonly hooks: CheckpointHooks;
  private readonly log: (line: string) => void;
  private readonly receipts: ReceiptBatcher;
  private readonly running = new Map<string, { run: AttemptRun; done: Promise<void> }>();
  private session: string | null = null;
  private stopping = false;
  private wakeStop: () => void = () => undefined;
  private readonly stopped = new Promise<void>((resolve) => (this.wakeStop = resolve));
  private slotFreed: () => void = () => undefined;
  private loops: Promise<void>[] = [];

  constructor(options: WorkerOptions) {
    this.coordinator = options.coordinator;
    this.handlers = options.handlers;
    this.adapters = [...options.handlers.keys()];
    this.concurrency = options.concurrency ?? 10;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 1_000;
    this.recoveryBatchSize = options.recoveryBatchSize ?? 100;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 2_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
    this.hooks = options.hooks ?? noHooks;
    this.log = options.log ?? ((line) => process.stderr.write(`[worker] ${line}\n`));
    this.receipts = new ReceiptBatcher(this.coordinator, () => this.sessionId, options.receiptBatchSize ?? 100);
  }

  get sessionId(): string {
    if (this.session === null) throw new Error("worker has not started");
    return this.session;
  }

  /** Attempts currently running in this worker. */
  get active(): number {
    return this.running.size;
  }

  async start(): Promise<string> {
    this.session = await this.coordinator.registerSession();
    this.loops = [this.claimLoop(), this.every(this.recoveryIntervalMs, () => this.recoverOnce()), this.every(this.heartbeatIntervalMs, () => this.heartbeat())];
    return this.session;
  }

  /**
   * Graceful stop: no more claims; attempts whose invocation has not begun are released; the
   * rest get `shutdownTimeoutMs` to finish. Correctness never depends on this running.
   */
  async stop(reason = "stopped"): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeStop();
    this.slotFreed();
    for (const { run } of this.running.values()) {
      if (!run.invocationBegan) run.lose("worker stopping");
    }
    const all = Promise.all([...this.running.values()].map((entry) => entry.done));
    await Promise.race([all, delay(this.shutdownTimeoutMs)]);
    await Promise.all(this.loops);
    if (this.session) await this.coordinator.stopSession(this.session, reason).catch((error) => this.log(`stop session: ${String(error)}`));
    await this.coordinator.close();
  }

  private async claimLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      const sentAt = performance.now();
      let claimed: ClaimedStep[];
      try {
        claimed = await this.coordinator.claim(this.sessionId, this.adapters, free);
        failures = 0;
      } catch (error) {
        failures += 1;
        this.log(`claim failed: ${String(error)}`);
        await Promise.race([delay(Math.min(5_000, 100 * 2 ** failures)), this.stopped]);
        continue;
      }
      for (const step of claimed) this.startAttempt(step, sentAt);
      if (claimed.length < free) await Promise.race([this.coordinator.waitForWork(jitter(this.pollIntervalMs)), this.stopped]);
    }
  }

  private async every(intervalMs: number, work: () => Promise<boolean>): Promise<void> {
    while (!this.stopping) {
      const more = await work().catch((error: unknown) => {
        this.log(String(error));
        return false;
      });
      if (!more) await Promise.race([delay(jitter(intervalMs)), this.stopped]);
    }
  }

  /** One recovery pass; true when the batch was full and another pass should follow at once. */
  private async recoverOnce(): Promise<boolean> {
    const decided = await this.coordinator.recover(this.sessionId, this.recoveryBatchSize);
    return decided >= this.recoveryBatchSize;
  }

  private async heartbeat(): Promise<boolean> {
    await this.coordinator.heartbeat(this.sessionId);
    return false;
  }

  private startAttempt(step: ClaimedStep, claimSentAtMs: number): void {
    const run = new AttemptRun(step, this.sessionId, this.coordinator, claimSentAtMs, this.log);
    const done = this.runAttempt(run).finally(() => {
      run.stop();
      this.running.delete(step.stepId);
      this.slotFreed();
    });
    this.running.set(step.stepId, { run, done });
  }

  private async runAttempt(run: AttemptRun): Promise<void> {
    const { step } = run;
    run.startRenewing();
    try {
      await this.hooks.reached("claimed", step);
      const outcome = await this.runHandler(run);
      const invalid = invalidOutcome(outcome);
      if (invalid) {
        await this.coordinator.reportFailure(run.lease, invalid);
        return;
      }
      await this.hooks.reached("before_receipt", step);
      const receipt = await this.receipts.commit({ lease: run.lease, conclusion: outcome });
      if (!receipt.committed) throw receipt.error;
      await this.hooks.reached("receipt_committed", step);
    } catch (error) {
      await this.concludeWithoutReceipt(run, error);
    }
  }

  private async runHandler(run: AttemptRun): Promise<StepOutcome> {
    const handler = this.handlers.get(run.step.adapter);
    if (!handler) throw new Error(`no handler for adapter ${run.step.adapter}`);
    const remainingMs = run.handlerDeadlineMs() - performance.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error("deadline exceeded");
        run.lose("attempt deadline exceeded");
        reject(error);
      }, Math.max(0, remainingMs));
    });
    try {
      return await Promise.race([handler(this.contextFor(run)), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private contextFor(run: AttemptRun): StepContext {
    const { step } = run;
    return {
      stepId: step.stepId,
      workflowId: step.workflowId,
      operation: step.operation,
      input: step.input,
      mode: step.mode,
      requestIdentity: step.requestIdentity,
      signal: run.signal,
      invoke: (call) => this.invoke(run, call),
      query: (call) => this.query(run, call),
    };
  }

  /**
   * Crosses the effect boundary: identity persisted, an adapter permit, invocation began, the
   * call, and its answer made durable. What the destination said decides what happens next: an
   * answer is observed as a present effect; a definite refusal as an absent one (recovery may
   * retry); a rate limit releases the lease to wait; anything else leaves the outcome unknown,
   * and the permit stays held.
   */
  private async invoke(run: AttemptRun, call: (invocation: Invocation) => Promise<DestinationAnswer>): Promise<DestinationAnswer> {
    const { step, lease } = run;
    const contract = contractFor(step.adapter);
    const requestIdentity = await this.persistIdentity(run, contract);
    const permit = await this.takePermit(run, contract, "create", requestIdentity);
    let answer: DestinationAnswer;
    try {
      run.assertHolding();
      const began = await run.serialize(() => this.coordinator.beginInvocation(lease));
      run.checkpointVersion = began.checkpointVersion;
      run.invocationBegan = true;
      await this.hooks.reached("invocation_began", step);
      answer = await call({ requestIdentity, fencingTerm: step.fencingTerm, epoch: step.epoch, signal: run.signal, timeoutMs: contract.timeoutMs });
    } catch (error) {
      await this.settlePermit(permit, contract, run.invocationBegan && !answeredWithoutEffect(error) ? error : null);
      if (!run.invocationBegan) throw error;
      if (error instanceof RateLimited) throw new WaitRequested(error.retryAfterMs, error.message);
      if (answeredWithoutEffect(error)) await this.recordEffectAbsent(run, { code: error.code, message: error.message });
      throw error;
    }
    await this.settlePermit(permit, contract, null);
    await this.hooks.reached("destination_answered", step);
    const observed = await run.serialize(() => this.coordinator.observeResponse(lease, answer.externalReference, answer.result));
    run.checkpointVersion = observed.checkpointVersion;
    await this.hooks.reached("response_observed", step);
    return answer;
  }

  /**
   * A status query: asks the destination about the step's request identity. It has no effect,
   * so no invocation begins; a query that gets no answer leaves the attempt at its identity
   * checkpoint, and recovery asks again.
   */
  private async query(run: AttemptRun, call: (query: StatusQuery) => Promise<StatusAnswer>): Promise<Extract<StatusAnswer, { status: "applied" }>> {
    const { step } = run;
    const contract = contractFor(step.adapter);
    if (!contract.operationClasses.includes("query")) throw new Error(`adapter ${contract.name} does not answer status queries`);
    if (step.requestIdentity === null) throw new Error("a status query needs the request identity of an earlier attempt");
    const requestIdentity = await this.persistIdentity(run, contract);
    const permit = await this.takePermit(run, contract, "query", requestIdentity);
    let answer: StatusAnswer;
    try {
      run.assertHolding();
      answer = await call({ requestIdentity, signal: run.signal, timeoutMs: contract.timeoutMs });
    } finally {
      await this.settlePermit(permit, contract, null);
    }
    if (answer.status === "applied") return answer;
    await this.recordEffectAbsent(run, { status: answer.status, answer: answer.result });
    throw new EffectAbsent(`status query found no trace of ${requestIdentity}`);
  }

  /** Checkpoint 2, after checking that a call could finish inside the attempt's authority. */
  private async persistIdentity(run: AttemptRun, contract: AdapterContract): Promise<string> {
    const { step, lease } = run;
    run.assertHolding();
    // A call must be able to end, by answer or by timeout, while the attempt still has authority.
    if (contract.timeoutMs >= run.authorityWindowMs) {
      throw new Error(
        `deadline hierarchy: adapter ${contract.name} times out after ${contract.timeoutMs} ms, not inside the ${run.authorityWindowMs} ms ` +
          `an attempt of step class ${step.stepClass} may work (deadline ${step.attemptDeadlineMs} ms less grace and margin)`,
      );
    }
    if (run.handlerDeadlineMs() - performance.now() <= contract.timeoutMs) {
      throw new Error(`too little authority left for a ${contract.timeoutMs} ms call: not calling`);
    }
    const identity = await run.serialize(() => this.coordinator.persistRequestIdentity(lease, `fl-${step.stepId}`, contract.version));
    run.checkpointVersion = identity.checkpointVersion;
    await this.hooks.reached("identity_persisted", step);
    return identity.requestIdentity;
  }

  private async takePermit(run: AttemptRun, contract: AdapterContract, operationClass: "create" | "query", requestIdentity: string): Promise<Permit> {
    const permit = await this.coordinator.acquirePermit(run.lease, {
      adapter: contract.name,
      operationClass,
      limit: contract.concurrencyLimit,
      ttlMs: contract.timeoutMs + PERMIT_MARGIN_MS,
      requestIdentity,
    });
    if (isPermit(permit)) return permit;
    run.assertHolding();
    // Capacity held for unknown outcomes frees only when the earliest hold runs out: wait that long.
    const waitMs = Math.min(MAX_CAPACITY_WAIT_MS, permit.waitMs ?? NO_CAPACITY_WAIT_MS);
    throw new WaitRequested(jitter(Math.max(NO_CAPACITY_WAIT_MS, waitMs)), `no ${contract.name} ${operationClass} capacity free`);
  }

  /** Returns the permit, or keeps it held when the call's outcome is unknown (`unknownBecause`). */
  private async settlePermit(permit: Permit, contract: AdapterContract, unknownBecause: unknown): Promise<void> {
    try {
      if (unknownBecause === null) await this.coordinator.releasePermit(permit.permitId);
      else await this.coordinator.holdPermit(permit.permitId, `outcome unknown: ${String(unknownBecause)}`.slice(0, 500), HELD_PERMIT_FACTOR * (contract.timeoutMs + PERMIT_MARGIN_MS));
    } catch (error) {
      // The sweep settles a permit whose holder could not.
      this.log(`permit ${permit.permitId}: ${String(error)}`);
    }
  }

  private async recordEffectAbsent(run: AttemptRun, answer: unknown): Promise<void> {
    const observed = await run.serialize(() => this.coordinator.observeEffectAbsent(run.lease, answer));
    run.checkpointVersion = observed.checkpointVersion;
    await this.hooks.reached("response_observed", run.step);
  }

  /**
   * The attempt ends without a receipt. Lost authority needs nothing more: the refusal and its
   * payload were recorded. Work that never began is handed back when stopping. Anything else is
   * reported as a failure, and recovery decides from the evidence.
   */
  private async concludeWithoutReceipt(run: AttemptRun, error: unknown): Promise<void> {
    if (error instanceof AuthorityLostError) {
      this.log(error.message);
      return;
    }
    try {
      if (error instanceof WaitRequested) {
        await this.coordinator.release(run.lease, `waiting: ${error.message}`.slice(0, 500), { delayMs: error.delayMs, effectAbsent: run.invocationBegan });
        return;
      }
      if (this.stopping && !run.invocationBegan) {
        await this.coordinator.release(run.lease, "worker stopping");
        return;
      }
      await this.coordinator.reportFailure(run.lease, failureReason(error));
    } catch (secondary) {
      this.log(`step ${run.lease.stepId} term ${run.lease.fencingTerm}: ${String(secondary)}`);
    }
  }
}

function failureReason(error: unknown): string {
  if (error instanceof Error) {
    return error.message === "deadline exceeded" ? "deadline exceeded" : `handler threw: ${error.message}`.slice(0, 500);
  }
  return `handler threw: ${String(error)}`.slice(0, 500);
}

/** The destination answered, and its answer says nothing was applied. */
function answeredWithoutEffect(error: unknown): error is DefiniteFailure | StaleTermRejected | RateLimited {
  return error instanceof DefiniteFailure || error instanceof StaleTermRejected || error instanceof RateLimited;
}
