/**
 * Faults a test asks for, applied to the environment's own worker at exact points, never by
 * timing. Two kinds:
 *
 *  - call faults act where an adapter is called: the effect is applied and its answer lost, the
 *    destination answers 429 with Retry-After, times out, or fails definitely. They wrap the
 *    adapters of the workflows the environment serves (the registered shape is unchanged) and
 *    learn which step calls from an async context that the wrapped step handler opens.
 *  - checkpoint faults act at a named checkpoint (lib/worker/hooks.ts): the attempt pauses there
 *    and its lease renewals are withheld until the test resumes it, or it is killed there: it
 *    never goes on and never renews again, as if its process had died at that point.
 *
 * Each fault applies to the first `times` matches (default 1), in the order they were asked for.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { DefiniteFailure, RateLimited, UnknownOutcome } from "@/lib/adapters/call-outcome";
import type { AdapterDefinition } from "@/lib/definitions/adapter";
import { undoStepName } from "@/lib/compensation/definition";
import { isAdapterChoice, type StepDefinition, type WorkflowDefinition } from "@/lib/definitions/workflow";
import type { ClaimedStep, RenewRequest, RenewResult } from "@/lib/engine/types";
import type { Coordinator } from "@/lib/worker/coordinator";
import { checkpointNames, type CheckpointHooks, type CheckpointName } from "@/lib/worker/hooks";

/**
 * Which calls or attempts a fault applies to: every field given must match. `step` is the step's
 * name in its workflow, `kind` the workflow's kind, `adapter` the adapter's name.
 */
export type FaultTarget = {
  readonly step?: string;
  readonly kind?: string;
  readonly adapter?: string;
  /** How many matching calls or attempts the fault applies to. Default 1. */
  readonly times?: number;
};

/** What a destination does instead of answering normally. */
export type CallFault =
  /** The destination applies the effect; its answer never arrives (the call throws). */
  | { readonly kind: "answer_lost" }
  /** The destination refuses before any effect: 429 with Retry-After. */
  | { readonly kind: "rate_limited"; readonly retryAfterMs: number }
  /** No answer within the adapter's timeout; with `applied`, the effect landed all the same. */
  | { readonly kind: "timeout"; readonly applied: boolean }
  /** The destination refuses and applies nothing (a 4xx). */
  | { readonly kind: "definite_failure"; readonly status: number; readonly detail: string };

/** An attempt stopped at a checkpoint by a fault. */
export type StoppedAttempt = {
  readonly requestId: string;
  readonly stepId: string;
  readonly step: string;
  readonly kind: string;
  /** The attempt's fencing term, as its worker holds it. */
  readonly fencingTerm: bigint;
  readonly checkpoint: CheckpointName;
};

/** A checkpoint fault as the test holds it. */
export type CheckpointFault = {
  /** Resolves when a matching attempt reaches the checkpoint and stops there. */
  readonly reached: Promise<StoppedAttempt>;
};

/** A pause: the attempt stays at the checkpoint, renewing nothing, until `resume()`. */
export type PausedAttempt = CheckpointFault & {
  /** The attempt goes on from the checkpoint with the view it had: its term, its answer in hand. */
  resume(): void;
};

type Pending<F> = { readonly target: FaultTarget; readonly fault: F; remaining: number };
type CheckpointPlan = { readonly at: CheckpointName; readonly effect: "pause" | "kill"; readonly found: (stopped: StoppedAttempt) => void; readonly gate: Promise<void>; open: () => void };

type Calling = { readonly kind: string; readonly step: string };

const leaseKey = (stepId: string, fencingTerm: bigint) => `${stepId}#${fencingTerm}`;

const matches = (target: FaultTarget, call: { kind: string; step: string; adapter?: string }) =>
  (target.step === undefined || target.step === call.step) &&
  (target.kind === undefined || target.kind === call.kind) &&
  (target.adapter === undefined || target.adapter === call.adapter);

/** Closing the environment ends every stopped attempt with this error. */
export class EnvironmentClosedError extends Error {
  constructor() {
    super("the test environment was closed");
  }
}

export class FaultPlan {
  private readonly calling = new AsyncLocalStorage<Calling>();
  private readonly callFaults: Pending<CallFault>[] = [];
  private readonly checkpointFaults: Pending<CheckpointPlan>[] = [];
  /** Leases whose renewals are withheld, with what releases them. */
  private readonly frozen = new Map<string, Promise<void>>();
  private readonly wrapped = new Map<AdapterDefinition, AdapterDefinition>();
  private closed = false;
  private closing: () => void = () => undefined;
  private readonly closedSignal = new Promise<void>((resolve) => (this.closing = resolve));

  /** Asks for a call fault on the next `times` matching calls. */
  addCallFault(target: FaultTarget, fault: CallFault): void {
    this.callFaults.push({ target, fault, remaining: target.times ?? 1 });
  }

  /** Asks for a pause or a kill at `at` on the next `times` matching attempts. */
  addCheckpointFault(target: FaultTarget, at: CheckpointName, effect: "pause" | "kill"): PausedAttempt {
    if (!checkpointNames.includes(at)) throw new Error(`no checkpoint named ${JSON.stringify(at)}: one of ${checkpointNames.join(", ")}`);
    let found: (stopped: StoppedAttempt) => void = () => undefined;
    const reached = new Promise<StoppedAttempt>((resolve) => (found = resolve));
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    this.checkpointFaults.push({ target, fault: { at, effect, found, gate, open }, remaining: target.times ?? 1 });
    return { reached, resume: () => (effect === "pause" ? open() : undefined) };
  }

  /** The workflows the worker serves: the same shapes, with their handlers and adapters observed. */
  workflows(workflows: readonly WorkflowDefinition[]): WorkflowDefinition[] {
    return workflows.map((workflow) => ({ ...workflow, steps: workflow.steps.map((step) => this.step(workflow, step)) }));
  }

  /** Checkpoint hooks that apply the pauses and kills asked for. */
  readonly hooks: CheckpointHooks = {
    reached: async (name, step) => {
      const pending = this.take(this.checkpointFaults, (entry) => entry.fault.at === name && matches(entry.target, { kind: step.kind, step: step.stepName }));
      if (!pending) return;
      const key = leaseKey(step.stepId, step.fencingTerm);
      const released = pending.effect === "pause" ? Promise.race([pending.gate, this.closedSignal]) : this.closedSignal;
      this.frozen.set(key, released);
      pending.found(stoppedAttempt(step, name));
      await released;
      this.frozen.delete(key);
      if (this.closed) throw new EnvironmentClosedError();
    },
  };

  /** The worker's coordinator, with renewals of a stopped attempt withheld and everything refused once closed. */
  coordinator(inner: Coordinator): Coordinator {
    const guard = (call: (...args: never[]) => Promise<unknown>) => async (...args: never[]): Promise<unknown> => {
      if (this.closed) throw new EnvironmentClosedError();
      return call(...args);
    };
    const renew = async (sessionId: string, requests: readonly RenewRequest[]): Promise<RenewResult[]> => {
      for (const request of requests) await this.frozen.get(leaseKey(request.stepId, request.fencingTerm));
      // After close, every renewal is refused: the attempts still running lose their authority.
      if (this.closed) return requests.map((request) => ({ stepId: request.stepId, renewed: false, reason: "lease_ended" }));
      return inner.renew(sessionId, requests);
    };
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(inner)) wrapped[name] = typeof value === "function" ? guard((value as (...args: never[]) => Promise<unknown>).bind(inner)) : value;
    // Waiting has no effect to refuse: after close it answers at once, so a claim loop that was
    // between claims reaches its refused claim (which it survives) instead of a rejected wait.
    const waitForWork = async (timeoutMs: number): Promise<void> => (this.closed ? undefined : inner.waitForWork(timeoutMs));
    // A claim, a wait and a claim of the wrapped coordinator: a close during the wait refuses the
    // second claim, as it refuses any claim after close.
    const claim = wrapped.claim as Coordinator["claim"];
    const claimOrWait: Coordinator["claimOrWait"] = async (sessionId, served, limit, waitMs, signal) => {
      const claimed = await claim(sessionId, served, limit);
      if (claimed.length > 0 || limit <= 0 || waitMs <= 0 || signal?.aborted) return claimed;
      let stopWaiting = () => undefined as void;
      const aborted = new Promise<void>((resolve) => (stopWaiting = resolve));
      signal?.addEventListener("abort", stopWaiting, { once: true });
      try {
        await Promise.race([waitForWork(waitMs), aborted]);
      } finally {
        signal?.removeEventListener("abort", stopWaiting);
      }
      return signal?.aborted ? [] : claim(sessionId, served, limit);
    };
    // Closing and stopping the session must still work after close.
    return { ...(wrapped as Coordinator), renew, waitForWork, claimOrWait, stopSession: inner.stopSession.bind(inner), close: inner.close.bind(inner) };
  }

  /** Releases every stopped attempt (each ends with EnvironmentClosedError) and refuses further work. */
  close(): void {
    this.closed = true;
    this.closing();
  }

  private take<F>(list: Pending<F>[], test: (entry: Pending<F>) => boolean): F | null {
    const index = list.findIndex((entry) => entry.remaining > 0 && test(entry));
    if (index < 0) return null;
    const entry = list[index]!;
    entry.remaining -= 1;
    return entry.fault;
  }

  private step(workflow: WorkflowDefinition, step: StepDefinition): StepDefinition {
    const calling: Calling = { kind: workflow.kind, step: step.name };
    const adapter = step.adapter === null ? null : isAdapterChoice(step.adapter)
      ? { ...step.adapter, options: Object.fromEntries(Object.entries(step.adapter.options).map(([key, option]) => [key, this.adapter(option)])) }
      : this.adapter(step.adapter);
    // An undo runs as a step of its own, `<step>.undo` (lib/compensation): faults name it so.
    const compensate = step.compensate && {
      ...step.compensate,
      adapter: this.adapter(step.compensate.adapter),
      payload: (source: Parameters<NonNullable<StepDefinition["compensate"]>["payload"]>[0]) => {
        this.calling.enterWith({ kind: workflow.kind, step: undoStepName(step.name) });
        return step.compensate!.payload(source);
      },
    };
    return { ...step, adapter, compensate, run: (ctx) => this.calling.run(calling, () => step.run(ctx)) };
  }

  private adapter(adapter: AdapterDefinition): AdapterDefinition {
    const known = this.wrapped.get(adapter);
    if (known) return known;
    const wrapped: AdapterDefinition = {
      ...adapter,
      invoke: async (call) => {
        const calling = this.calling.getStore();
        const fault = calling ? this.take(this.callFaults, (entry) => matches(entry.target, { ...calling, adapter: adapter.name })) : null;
        if (!fault) return adapter.invoke(call);
        switch (fault.kind) {
          case "answer_lost":
            await adapter.invoke(call);
            throw new UnknownOutcome(adapter.name, "connection lost");
          case "timeout":
            if (fault.applied) await adapter.invoke(call);
            throw new UnknownOutcome(adapter.name, "timeout");
          case "rate_limited":
            throw new RateLimited(adapter.name, fault.retryAfterMs);
          case "definite_failure":
            throw new DefiniteFailure(adapter.name, fault.status, fault.detail);
        }
      },
    };
    this.wrapped.set(adapter, wrapped);
    return wrapped;
  }
}

function stoppedAttempt(step: ClaimedStep, checkpoint: CheckpointName): StoppedAttempt {
  return { requestId: step.workflowId, stepId: step.stepId, step: step.stepName, kind: step.kind, fencingTerm: step.fencingTerm, checkpoint };
}
