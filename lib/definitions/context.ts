/**
 * What a step's handler gets: its request's input, who it is, the fencing term to hand to a
 * fenced destination, an abort signal, and the two ways to act: `invoke` (cross the effect
 * boundary to the step's adapter) and `wait` (come back later without holding a lease).
 */
import type { AttemptMode } from "@/lib/engine/vocabulary";
import type { ObservedResponse } from "./outcome";

/** The authority an attempt holds: hand both numbers to a destination that enforces fencing terms. */
export type FencingTerm = {
  /** Opens anew after a database restore; never reused. */
  readonly epoch: bigint;
  /** Strictly increasing per step within an epoch. */
  readonly version: bigint;
};

/**
 * What a step's handler (`run`) receives for one attempt. `Results` are the results of the steps
 * it depends on (typed when the workflow is built with `.step()`), `Payload` what its adapter
 * takes and `AdapterResult` what its adapter answers.
 */
export type StepContext<Input = unknown, Payload = unknown, Results = Readonly<Record<string, unknown>>, AdapterResult = unknown> = {
  /** The workflow kind and version this request pinned when it was created. */
  readonly kind: string;
  readonly version: number;
  /** The step's name in its workflow definition. */
  readonly step: string;
  readonly workflowId: string;
  readonly stepId: string;
  /** The request's input, parsed by the workflow's schema. */
  readonly input: Input;
  /**
   * What the steps this one depends on concluded with, by step name: the `result` of their
   * receipts (a pure step's `done(result)`, an adapter step's observed answer). A dependency that
   * was skipped or needed no action has `null`.
   */
  readonly results: Results;
  /**
   * The external reference in the receipt of each step this one depends on, by step name: the
   * destination's own id for the effect (a charge id, say), or null where it gave none or the
   * dependency called nothing.
   */
  readonly externalReferences: Readonly<Record<string, string | null>>;
  /**
   * `execute` on a first try; `retry_same_identity` when an earlier try persisted the request
   * identity; `status_query` when recovery asked to learn what happened (then `invoke` asks the
   * destination instead of calling it again).
   */
  readonly mode: AttemptMode;
  /** The step's request identity when an earlier attempt persisted it; null on a first try. */
  readonly requestIdentity: string | null;
  /** The fencing term this attempt holds. */
  readonly fencingTerm: FencingTerm;
  /** This attempt's number among the step's tries, and the step's attempt budget. */
  readonly attempt: { readonly number: number; readonly budget: number };
  /**
   * How often this step has waited before this run (each `ctx.wait`, and each wait the worker took
   * for a rate limit or for capacity), and when the first and the latest wait began, on the
   * database clock. A handler that waits re-runs from the start after its wait: this is how it
   * tells it already waited, and for how long it has been at it. `{ count: 0, firstAt: null,
   * lastAt: null }` on a step that never waited.
   *
   * @example
   * ```ts
   * if (!(await warehouse.isReady(ctx.input.orderId))) {
   *   if (ctx.waits.count >= 10) return skip("the warehouse never got it ready");
   *   return ctx.wait(60_000, "the warehouse is not ready yet");
   * }
   * ```
   */
  readonly waits: { readonly count: number; readonly firstAt: Date | null; readonly lastAt: Date | null };
  /** Fires when authority is lost or uncertain, the workflow is cancelled, or the worker stops. */
  readonly signal: AbortSignal;
  /**
   * Crosses the effect boundary: persists the request identity, takes a slot of the adapter's
   * concurrency, records that the invocation began, calls the adapter, and makes its answer
   * durable before returning it. In `status_query` mode it asks the destination instead; when
   * the destination has no trace of the request, the attempt ends and recovery retries with
   * the same identity. Pure steps have no adapter to invoke.
   */
  invoke(payload: Payload): Promise<ObservedResponse<AdapterResult>>;
  /**
   * Gives the step back and asks to run it again after `delayMs`, without holding a lease
   * meanwhile (a rate limit, a resource not ready yet). Not charged to the attempt budget. The
   * handler runs again from the start; `ctx.waits` then counts this wait. To wait once for a time
   * between steps, declare a timer step (`.timer(…)`) instead: it holds nothing and fires once.
   */
  wait(delayMs: number, reason: string): Promise<never>;
};

/**
 * What a wait step's functions receive (a timer's `until`, an event wait's `key`): the request's
 * input and the results of the steps it depends on, but no way to act, since a wait calls nothing.
 */
export type WaitContext<Input = unknown, Results = Readonly<Record<string, unknown>>> = Omit<StepContext<Input, never, Results>, "invoke" | "wait">;
