/**
 * The worker runtime: registers a session, claims steps with bounded concurrency, runs their
 * handlers, renews their leases, commits receipts in batches, and takes part in the recovery
 * scan. On stop it claims nothing more, releases work whose invocation has not begun, and gives
 * the rest a bounded time to finish; whatever is left is recovered from evidence after expiry.
 */
import { undoStepOf } from "@/lib/compensation/steps";
import { DefiniteFailure, RateLimited, StaleTermRejected, UnknownOutcome } from "@/lib/adapters/call-outcome";
import { pureContract, type AdapterContract } from "@/lib/adapters/contract";
import type { AdapterDefinition } from "@/lib/definitions/adapter";
import type { StepContext } from "@/lib/definitions/context";
import type { ObservedResponse, StepOutcome } from "@/lib/definitions/outcome";
import { optInAttributes } from "@/lib/telemetry/redact";
import { registrationOf, type Registration } from "@/lib/definitions/registration";
import { isAdapterChoice, workflowKey, type StepDefinition, type WaitOutcome, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { context } from "@opentelemetry/api";
import { AuthorityLostError, CheckpointOrderError } from "@/lib/engine/errors";
import { CALL_START_WITHIN_MS, HELD_PERMIT_FACTOR, isPermit } from "@/lib/engine/permit-policy";
import { WAIT_RELEASE_PREFIX, type ClaimedStep, type Permit, type WorkflowVersion } from "@/lib/engine/types";
import { AttemptRun } from "./attempt-run";
import type { Coordinator } from "./coordinator";
import { EffectAbsent, invalidOutcome, WaitRequested } from "./handler";
import { noHooks, type CheckpointHooks, type CheckpointName } from "./hooks";
import { ReceiptBatcher } from "./receipt-batcher";
import type { AttemptEnd } from "./tracing";

export type WorkerOptions = {
  readonly coordinator: Coordinator;
  /** The workflow versions this worker serves; registered with their adapters when it starts. */
  readonly workflows: readonly WorkflowDefinition[];
  /** Attempts run at once by this worker. Default 10. */
  readonly concurrency?: number;
  /** Longest wait for new work when no notification arrives, in ms. Default 1,000. */
  readonly pollIntervalMs?: number;
  /** How often this worker takes part in the recovery scan, in ms. Default 1,000. */
  readonly recoveryIntervalMs?: number;
  /** Leases one recovery pass decides at most. Default 100. */
  readonly recoveryBatchSize?: number;
  /** Session heartbeat interval, in ms. Default 2,000. */
  readonly heartbeatIntervalMs?: number;
  /** How long stop() lets running attempts finish, in ms. Default 10,000. */
  readonly shutdownTimeoutMs?: number;
  /** Receipts committed together at most. Default 100. */
  readonly receiptBatchSize?: number;
  /**
   * Waits one keeper pass settles at most (timers that fire, waits that time out). Default 500.
   * Every worker keeps time for every request, not only for the kinds it serves: what the
   * database clock makes due is settled by whichever worker looks first.
   */
  readonly keeperBatchSize?: number;
  readonly hooks?: CheckpointHooks;
  readonly log?: (line: string) => void;
};

const jitter = (ms: number) => ms * (0.9 + Math.random() * 0.2);
/** How long a step waits, without a lease, when its adapter has no free capacity. */
const NO_CAPACITY_WAIT_MS = 250;
const MAX_CAPACITY_WAIT_MS = 30_000;
/** A permit outlives its call's timeout by this much before a sweep may reclaim it. */
const PERMIT_MARGIN_MS = 1_000;
/** How long one keeper pass may wait for the next due time before it asks again. */
const KEEPER_WAIT_MS = 25_000;
/** How long the claim loop waits after its `failures`-th failed claim in a row: doubling from 200 ms, at most 5 s. */
export const claimRetryDelayMs = (failures: number): number => Math.min(5_000, 100 * 2 ** failures);
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Served = { readonly workflow: WorkflowDefinition; readonly step: StepDefinition };

const stepKey = (kind: string, version: number, step: string) => `${kind}@${version}/${step}`;

export class Worker {
  private readonly coordinator: Coordinator;
  private readonly registration: Registration;
  /** The steps this worker runs, by `kind@version/step`. */
  private readonly steps = new Map<string, Served>();
  private served: readonly WorkflowVersion[] = [];
  private readonly concurrency: number;
  private readonly pollIntervalMs: number;
  private readonly recoveryIntervalMs: number;
  private readonly recoveryBatchSize: number;
  private readonly keeperBatchSize: number;
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
  /** Aborted by stop(): ends a claim's wait at once, and it claims nothing more. */
  private readonly stopSignal = new AbortController();
  private slotFreed: () => void = () => undefined;
  /** Slots promised to claims in flight (the claim loop's, and those alongside receipt batches). */
  private reserved = 0;
  private loops: Promise<void>[] = [];

  /** Throws DefinitionError when the workflows cannot be registered together. */
  constructor(options: WorkerOptions) {
    this.coordinator = options.coordinator;
    this.registration = registrationOf(options.workflows);
    for (const workflow of options.workflows) {
      for (const step of workflow.steps) {
        this.steps.set(stepKey(workflow.kind, workflow.version, step.name), { workflow, step });
        // A step that declares how its effect is undone: its undo runs as a step of its own.
        const undo = undoStepOf(step);
        if (undo) this.steps.set(stepKey(workflow.kind, workflow.version, undo.name), { workflow, step: undo });
      }
    }
    this.concurrency = options.concurrency ?? 10;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 1_000;
    this.recoveryBatchSize = options.recoveryBatchSize ?? 100;
    this.keeperBatchSize = options.keeperBatchSize ?? 500;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 2_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
    this.hooks = options.hooks ?? noHooks;
    this.log = options.log ?? ((line) => process.stderr.write(`[worker] ${line}\n`));
    this.receipts = new ReceiptBatcher(this.coordinator, () => this.sessionId, options.receiptBatchSize ?? 100, {
      served: () => this.served,
      reserve: (committing) => this.reserve(committing),
      settle: (reserved, claimed, sentAtMs) => {
        this.reserved -= reserved;
        // Claimed while stop() began: handed back, as the claim loop's last wait does.
        if (this.stopping) void this.handBack(claimed);
        else for (const step of claimed) this.startAttempt(step, sentAtMs);
      },
    });
  }

  get sessionId(): string {
    if (this.session === null) throw new Error("worker has not started");
    return this.session;
  }

  /** Attempts currently running in this worker. */
  get active(): number {
    return this.running.size;
  }

  /** Registers the session and the definitions it serves, then starts claiming; returns the session id. */
  async start(): Promise<string> {
    const { sessionId, served } = await this.coordinator.registerSession(this.registration);
    this.session = sessionId;
    this.served = served;
    this.loops = [
      this.claimLoop(),
      this.every(this.recoveryIntervalMs, () => this.recoverOnce()),
      this.every(this.heartbeatIntervalMs, () => this.heartbeat()),
      this.keepTime(),
    ];
    return sessionId;
  }

  /**
   * Graceful stop: no more claims; attempts whose invocation has not begun are released; the
   * rest get `shutdownTimeoutMs` to finish. Correctness never depends on this running.
   */
  async stop(reason = "stopped"): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeStop();
    this.stopSignal.abort();
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

  /**
   * Slots for a receipt batch's claim: those its `committing` attempts free, and any free now that
   * no other claim has taken. None once stopping.
   */
  private reserve(committing: number): number {
    if (this.stopping) return 0;
    const slots = Math.max(0, Math.min(this.concurrency, this.concurrency - this.running.size - this.reserved + committing));
    this.reserved += slots;
    return slots;
  }

  private async claimLoop(): Promise<void> {
    let failures = 0;
    // After a claim that found less than it asked for, the next one waits for work.
    let drained = false;
    while (!this.stopping) {
      const free = this.concurrency - this.running.size - this.reserved;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      const sentAt = performance.now();
      this.reserved += free;
      let claimed: ClaimedStep[];
      try {
        claimed = await this.coordinator.claimOrWait(this.sessionId, this.served, free, drained ? jitter(this.pollIntervalMs) : 0, this.stopSignal.signal);
        failures = 0;
      } catch (error) {
        failures += 1;
        this.log(`claim failed: ${String(error)}`);
        await Promise.race([delay(claimRetryDelayMs(failures)), this.stopped]);
        continue;
      } finally {
        this.reserved -= free;
      }
      // A claim answered as stop() began: its steps go back, as do those claimed alongside receipts.
      if (this.stopping) await this.handBack(claimed);
      else for (const step of claimed) this.startAttempt(step, sentAt);
      drained = claimed.length < free;
    }
  }

  /** Steps claimed as stop() began; what cannot be handed back is recovered after its lease expires. */
  private async handBack(steps: readonly ClaimedStep[]): Promise<void> {
    for (const step of steps) {
      await this.coordinator
        .release({ stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId: this.sessionId }, "worker stopping")
        .catch((error: unknown) => this.log(`hand back ${step.stepId}: ${String(error)}`));
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

  /**
   * The keeper: settles what the database clock makes due (timers, timeouts), waiting between
   * passes for the next due time. A failed pass is retried after a pause like a failed claim.
   */
  private async keepTime(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.coordinator.settleDue(this.keeperBatchSize, KEEPER_WAIT_MS, this.stopSignal.signal);
        failures = 0;
      } catch (error) {
        failures += 1;
        this.log(`keeping time failed: ${String(error)}`);
        await Promise.race([delay(claimRetryDelayMs(failures)), this.stopped]);
      }
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
    // By term too: a paused attempt of this worker may still run when it claims the step's next term.
    const key = `${step.stepId}#${step.fencingTerm}`;
    const done = this.runAttempt(run).finally(() => {
      run.stop();
      this.running.delete(key);
      this.slotFreed();
    });
    this.running.set(key, { run, done });
  }

  private async runAttempt(run: AttemptRun): Promise<void> {
    run.startRenewing();
    try {
      await this.reached(run, "claimed");
      const outcome = await this.runHandler(run);
      // Whatever a handler returns is checked: `undefined` is a failure with its own reason.
      if (outcome?.kind === "wait") {
        await this.park(run, outcome);
        run.trace.end("parked");
        return;
      }
      const invalid = invalidOutcome(outcome);
      if (invalid) {
        await this.coordinator.reportFailure(run.lease, invalid);
        run.trace.end("failed");
        return;
      }
      await this.reached(run, "before_receipt");
      const receipt = await this.receipts.commit({ lease: run.lease, conclusion: outcome });
      if (!receipt.committed) throw receipt.error;
      await this.reached(run, "receipt_committed");
      run.trace.end(...endOf(outcome));
    } catch (error) {
      run.trace.end(await this.concludeWithoutReceipt(run, error));
    }
  }

  /** A checkpoint reached: on the attempt's span, then to the hooks tests synchronise on. */
  private reached(run: AttemptRun, name: CheckpointName): Promise<void> {
    run.trace.checkpoint(name);
    return this.hooks.reached(name, run.step);
  }

  /** A wait step gives up its lease and waits; its room does the rest. */
  private async park(run: AttemptRun, outcome: WaitOutcome): Promise<void> {
    const served = this.steps.get(stepKey(run.step.kind, run.step.workflowVersion, run.step.stepName));
    if (served?.step.wait?.room !== outcome.wait.room) {
      await this.coordinator.reportFailure(run.lease, "handler asked to wait, but the step is not a wait step of that kind");
      return;
    }
    run.assertHolding();
    await this.coordinator.park(run.lease, outcome.wait, `waiting: ${outcome.wait.room}`);
    await this.reached(run, "parked");
  }

  private async runHandler(run: AttemptRun): Promise<StepOutcome | WaitOutcome> {
    const { step } = run;
    const served = this.steps.get(stepKey(step.kind, step.workflowVersion, step.stepName));
    if (!served) throw new Error(`this worker does not serve ${stepKey(step.kind, step.workflowVersion, step.stepName)}`);
    const parsed = served.workflow.input.safeParse(step.input);
    if (!parsed.success) throw new Error(`the request's input does not match ${workflowKey(served.workflow)}'s input schema: ${parsed.error.message}`);
    const remainingMs = run.handlerDeadlineMs() - performance.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error("deadline exceeded");
        run.lose("attempt deadline exceeded");
        reject(error);
      }, Math.max(0, remainingMs));
    });
    run.trace.beginAttempt(optInAttributes(served.workflow.traceAttributes, parsed.data));
    try {
      // In the attempt's span: what the handler traces itself joins the request's trace.
      return await Promise.race([context.with(run.trace.context, () => served.step.run(this.contextFor(run, served.step, parsed.data))), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The adapter the claimed step runs on: its own, or the one its request's input chose. */
  private adapterOf(definition: StepDefinition, step: ClaimedStep): AdapterDefinition | null {
    if (definition.adapter === null) return null;
    const candidates = isAdapterChoice(definition.adapter) ? Object.values(definition.adapter.options) : [definition.adapter];
    const adapter = candidates.find((candidate) => candidate.name === step.adapter && candidate.version === step.adapterVersion);
    if (!adapter) throw new Error(`step ${step.stepName} runs on adapter ${step.adapter}@${step.adapterVersion}, which its definition does not name`);
    return adapter;
  }

  private contextFor(run: AttemptRun, definition: StepDefinition, input: unknown): StepContext {
    const { step } = run;
    const adapter = this.adapterOf(definition, step);
    return {
      kind: step.kind,
      version: step.workflowVersion,
      step: step.stepName,
      workflowId: step.workflowId,
      stepId: step.stepId,
      input,
      results: step.dependencyResults,
      externalReferences: step.dependencyReferences,
      mode: step.mode,
      requestIdentity: step.requestIdentity,
      fencingTerm: { epoch: step.epoch, version: step.fencingTerm },
      attempt: { number: step.attemptsStarted, budget: step.attemptBudget },
      waits: step.waits,
      signal: run.signal,
      invoke: async (payload) => {
        if (adapter === null) throw new Error(`step ${step.stepName} is a pure step: it has no adapter to invoke`);
        return step.mode === "status_query" ? this.query(run, adapter) : this.invoke(run, adapter, payload);
      },
      wait: async (delayMs, reason) => {
        throw new WaitRequested(Math.max(0, delayMs), reason);
      },
    };
  }

  /**
   * Crosses the effect boundary: identity persisted, an adapter permit, invocation began, the
   * call, and its answer made durable. What the destination said decides what happens next: an
   * answer is observed as a present effect; a definite refusal as an absent one (recovery may
   * retry); a rate limit releases the lease to wait; anything else leaves the outcome unknown,
   * and the permit stays held.
   */
  private async invoke(run: AttemptRun, adapter: AdapterDefinition, payload: unknown): Promise<ObservedResponse> {
    const { step, lease } = run;
    const { contract } = adapter;
    const requestIdentity = await this.persistIdentity(run, contract);
    const askedAt = performance.now();
    const permit = await this.takePermit(run, contract, "create", requestIdentity);
    let answer: Awaited<ReturnType<AdapterDefinition["invoke"]>>;
    try {
      run.assertHolding();
      assertCallSlotFresh(permit, contract, askedAt);
      const began = await run.serialize(() => this.coordinator.beginInvocation(lease));
      run.checkpointVersion = began.checkpointVersion;
      run.invocationBegan = true;
      await this.reached(run, "invocation_began");
      // Nothing has been sent yet: a slot gone stale while the checkpoint was written is given up.
      assertCallSlotFresh(permit, contract, askedAt);
      answer = await run.trace.call(adapter.name, adapter.version, "create", (traceHeaders) =>
        adapter.invoke({ payload, requestIdentity, fencingTerm: step.fencingTerm, epoch: step.epoch, signal: run.signal, timeoutMs: contract.timeoutMs, traceHeaders }),
      );
      run.trace.answered = true;
      if (answer === null || typeof answer !== "object" || (answer.externalReference !== null && typeof answer.externalReference !== "string")) {
        throw new UnknownOutcome(adapter.name, "unreadable answer");
      }
    } catch (error) {
      const notSent = error instanceof CallSlotLapsed;
      await this.settlePermit(permit, contract, run.invocationBegan && !notSent && !answeredWithoutEffect(error) ? error : null);
      if (!run.invocationBegan || notSent) throw error;
      if (error instanceof RateLimited) throw new WaitRequested(error.retryAfterMs, error.message);
      if (answeredWithoutEffect(error)) await this.recordEffectAbsent(run, { code: error.code, message: error.message });
      throw error;
    }
    await this.settlePermit(permit, contract, null);
    await this.reached(run, "destination_answered");
    const result = answer.result ?? null;
    const observed = await this.recordAnswer(run, () => this.coordinator.observeResponse(lease, answer.externalReference, result));
    run.checkpointVersion = observed.checkpointVersion;
    await this.reached(run, "response_observed");
    return { externalReference: answer.externalReference, result, verification: answer.replayed ? "idempotent_replay" : "direct_response" };
  }

  /**
   * A status query: asks the destination about the step's request identity. It has no effect,
   * so no invocation begins; a query that gets no answer leaves the attempt at its identity
   * checkpoint, and recovery asks again. No trace of the identity is recorded as an absent
   * effect and ends the attempt, so recovery retries with the same identity.
   */
  private async query(run: AttemptRun, adapter: AdapterDefinition): Promise<ObservedResponse> {
    const { step } = run;
    const { contract } = adapter;
    if (adapter.query === null) throw new Error(`adapter ${adapter.name} does not answer status queries`);
    if (step.requestIdentity === null) throw new Error("a status query needs the request identity of an earlier attempt");
    const requestIdentity = await this.persistIdentity(run, contract);
    const askedAt = performance.now();
    const permit = await this.takePermit(run, contract, "query", requestIdentity);
    let answer: Awaited<ReturnType<NonNullable<AdapterDefinition["query"]>>>;
    try {
      run.assertHolding();
      assertCallSlotFresh(permit, contract, askedAt);
      answer = await run.trace.call(adapter.name, adapter.version, "query", (traceHeaders) => adapter.query!({ requestIdentity, signal: run.signal, timeoutMs: contract.timeoutMs, traceHeaders }));
      run.trace.answered = true;
    } finally {
      await this.settlePermit(permit, contract, null);
    }
    if (answer.status === "applied") return { externalReference: answer.externalReference, result: answer.result ?? null, verification: "status_query" };
    await this.recordEffectAbsent(run, { status: answer.status, answer: answer.result ?? null });
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
    await this.reached(run, "identity_persisted");
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
    if (permit.reason === "rate") {
      // The database booked this step a moment of its own: come back then.
      const waitMs = Math.min(MAX_CAPACITY_WAIT_MS, permit.waitMs ?? NO_CAPACITY_WAIT_MS);
      throw new WaitRequested(waitMs, `no call slot free at ${contract.name}: it allows ${contract.rate?.perSecond ?? "a limited number of"} calls a second`);
    }
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

  /**
   * Records what the destination answered (checkpoint 4). The answer is evidence the worker alone
   * holds: when the write fails for want of the database (a restart, a lost connection), it is
   * tried again until it is recorded, refused (authority lost: then it is kept as a late
   * observation), or the attempt's last possible expiry has passed. Dropping it would leave recovery
   * to decide without it: a person for an opaque destination, a repeat call for an idempotent one.
   */
  private async recordAnswer<T>(run: AttemptRun, write: () => Promise<T>): Promise<T> {
    const giveUpAt = run.handlerDeadlineMs() + run.step.graceMs;
    for (let failures = 1; ; failures += 1) {
      try {
        return await run.serialize(write);
      } catch (error) {
        if (error instanceof AuthorityLostError || error instanceof CheckpointOrderError || performance.now() >= giveUpAt || this.stopping) throw error;
        this.log(`step ${run.lease.stepId} term ${run.lease.fencingTerm}: recording the destination's answer failed (${String(error)}); trying again`);
        await delay(Math.min(claimRetryDelayMs(failures), Math.max(0, giveUpAt - performance.now())));
      }
    }
  }

  private async recordEffectAbsent(run: AttemptRun, answer: unknown): Promise<void> {
    const observed = await this.recordAnswer(run, () => this.coordinator.observeEffectAbsent(run.lease, answer));
    run.checkpointVersion = observed.checkpointVersion;
    await this.reached(run, "response_observed");
  }

  /**
   * The attempt ends without a receipt. Lost authority needs nothing more: the refusal and its
   * payload were recorded. Work that never began is handed back when stopping. Anything else is
   * reported as a failure, and recovery decides from the evidence.
   */
  private async concludeWithoutReceipt(run: AttemptRun, error: unknown): Promise<AttemptEnd> {
    if (error instanceof AuthorityLostError) {
      this.log(error.message);
      run.trace.refused(error);
      return "authority_lost";
    }
    try {
      if (error instanceof WaitRequested) {
        await this.coordinator.release(run.lease, `${WAIT_RELEASE_PREFIX}${error.message}`.slice(0, 500), { delayMs: error.delayMs, effectAbsent: run.invocationBegan });
        return "waiting";
      }
      if (this.stopping && !run.invocationBegan) {
        await this.coordinator.release(run.lease, "worker stopping");
        return "handed_back";
      }
      await this.coordinator.reportFailure(run.lease, failureReason(error));
    } catch (secondary) {
      if (secondary instanceof AuthorityLostError) {
        run.trace.refused(secondary);
        return "authority_lost";
      }
      this.log(`step ${run.lease.stepId} term ${run.lease.fencingTerm}: ${String(secondary)}`);
    }
    return "failed";
  }
}

/** How a receipted attempt ended, for its span. */
function endOf(outcome: StepOutcome): [AttemptEnd, { verification?: string }] {
  if (outcome.kind === "effect") return ["completed", { verification: outcome.verification }];
  if (outcome.kind === "no_action_needed") return ["completed_without_effect", { verification: "no_action_needed" }];
  return ["skipped", {}];
}

function failureReason(error: unknown): string {
  if (error instanceof Error) {
    return error.message === "deadline exceeded" ? "deadline exceeded" : `handler threw: ${error.message}`.slice(0, 500);
  }
  return `handler threw: ${String(error)}`.slice(0, 500);
}

/**
 * A call under a destination's rate must start soon after its permit was asked for, or its slot
 * could crowd the next second at the destination: past CALL_START_WITHIN_MS it is not sent, and
 * the step waits for a fresh slot.
 */
function assertCallSlotFresh(permit: Permit, contract: AdapterContract, askedAtMs: number): void {
  if (!permit.rated) return;
  const elapsedMs = performance.now() - askedAtMs;
  if (elapsedMs > CALL_START_WITHIN_MS) {
    throw new CallSlotLapsed(NO_CAPACITY_WAIT_MS * Math.random(), `call slot at ${contract.name} lapsed: not sent ${Math.round(elapsedMs)} ms after asking, later than ${CALL_START_WITHIN_MS} ms`);
  }
}

/** The call was not sent: its slot went stale before it could start. The step waits for a fresh one. */
class CallSlotLapsed extends WaitRequested {}

/** The destination answered, and its answer says nothing was applied. */
function answeredWithoutEffect(error: unknown): error is DefiniteFailure | StaleTermRejected | RateLimited {
  return error instanceof DefiniteFailure || error instanceof StaleTermRejected || error instanceof RateLimited;
}
