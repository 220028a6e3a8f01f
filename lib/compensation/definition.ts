/**
 * What an adopter declares to undo an effect: on an effect step, `compensate` (its own adapter,
 * with its own contract, and how to build the undo's payload from the step's result and the
 * request's input, with the end user's words for it); on the workflow, `compensateOn` (when the
 * undos run). Checked when the workflow is defined; what the server keeps of it is registered
 * with the step (`RegisteredCompensation`).
 */
import type { AdapterDefinition } from "@/lib/definitions/adapter";
import type { RegisteredAdapterRef } from "@/lib/definitions/registration";

/** When a workflow's effects are undone: when a request is cancelled, when it fails, both, or never (the default). */
export const COMPENSATE_ON = ["cancel", "failure", "both", "never"] as const;
/** When a workflow's declared undos run (`defineWorkflow({ compensateOn })`): `"cancel"`, `"failure"`, `"both"` or `"never"` (the default). */
export type CompensateOn = (typeof COMPENSATE_ON)[number];

/** What an undo's payload is built from: the request's input and what the step it undoes concluded with. */
export type UndoSource<Input = unknown, StepResult = unknown> = {
  /** The request's input, parsed by the workflow's schema. */
  readonly input: Input;
  /** The result in the receipt of the step being undone (what its adapter answered). */
  readonly result: StepResult;
  /** The external reference in that receipt: the destination's own id for the effect (a charge id, say), or null where it gave none. */
  readonly externalReference: string | null;
};

/** The end user's words while the effect is being undone, and once it is: "Refunding your payment" / "Payment refunded". */
export type UndoMilestone = { readonly current: string; readonly done: string };

/**
 * How to undo an effect step's effect: `compensate` on a step of `defineWorkflow`. The undo runs
 * as a step of its own on `adapter` (whose contract may differ from the step's: an idempotent
 * refund for an opaque charge), only for an effect with a receipt, in reverse order of receipts.
 *
 * @example
 * ```ts
 * compensate: {
 *   adapter: refunds,
 *   payload: ({ input, result }) => ({ chargeId: result.chargeId, amountCents: input.amountCents }),
 *   milestone: { current: "Refunding your payment", done: "Payment refunded" },
 * }
 * ```
 */
export type CompensateOptions<Input = unknown, StepResult = unknown, Payload = unknown> = {
  readonly adapter: AdapterDefinition<Payload>;
  /** Builds the undo's payload. Runs in the worker for each attempt of the undo; keep it pure. */
  readonly payload: (source: UndoSource<Input, StepResult>) => Payload;
  readonly milestone: UndoMilestone;
  /** The undo's step class (its lease policy). @defaultValue "external" */
  readonly class?: string;
  /** Attempts before the undo goes to review (never to a failure). @defaultValue 5 */
  readonly attemptBudget?: number;
};

/**
 * `compensate` where the undo's payload type is not inferred (the `steps` object form of
 * defineWorkflow): any adapter, and a payload builder it takes on trust.
 */
export type LooseCompensateOptions<Input = unknown> = Omit<CompensateOptions<Input, unknown, never>, "payload"> & {
  /** Builds the undo's payload from the input and the undone step's result. Runs in the worker; keep it pure. */
  readonly payload: (source: UndoSource<Input, unknown>) => unknown;
};

/** A step's undo as defineWorkflow made it. */
export type CompensationDefinition = {
  readonly adapter: AdapterDefinition;
  /** Builds the undo's payload from the input and the undone step's result. */
  readonly payload: (source: UndoSource) => unknown;
  readonly milestone: UndoMilestone;
  readonly class: string;
  readonly attemptBudget: number;
};

/** What the server keeps of a step's undo, with its workflow's `compensateOn`. */
export type RegisteredCompensation = {
  readonly adapter: RegisteredAdapterRef;
  readonly class: string;
  readonly attemptBudget: number;
  readonly milestone: UndoMilestone;
  readonly on: Exclude<CompensateOn, "never">;
};

/** The name of the step that undoes step `name`: `charge.undo` (a step's own name has no dot). */
export const undoStepName = (name: string): string => `${name}.undo`;
/** The step an undo step undoes, or null for any other step. */
export const undoneStepOf = (name: string): string | null => (name.endsWith(".undo") ? name.slice(0, -".undo".length) : null);

const MAX_ATTEMPT_BUDGET = 1_000;

/**
 * Checks a step's `compensate`; `wordProblems` checks words as milestones are checked. Returns
 * the definition, or null with the problems pushed.
 */
export function compensationOf(
  where: string,
  compensate: CompensateOptions<never, never, never> | undefined,
  step: { readonly hasAdapter: boolean; readonly isChoice: boolean; readonly waits: boolean },
  wordProblems: (where: string, text: string | undefined) => string[],
  problems: string[],
): CompensationDefinition | null {
  if (compensate === undefined) return null;
  if (compensate === null || typeof compensate !== "object") {
    problems.push(`${where}: compensate must be an object with adapter, payload and milestone`);
    return null;
  }
  const found: string[] = [];
  if (step.waits || !step.hasAdapter) found.push(`${where}: only a step with an adapter has an effect to undo; compensate belongs on an effect step`);
  if (step.isChoice) found.push(`${where}: compensate is not supported on a step whose adapter the input chooses`);
  const adapter = compensate.adapter as AdapterDefinition | undefined;
  if (!adapter || typeof adapter !== "object" || typeof adapter.invoke !== "function" || typeof adapter.name !== "string") {
    found.push(`${where}: compensate.adapter must be an adapter made by defineAdapter`);
  } else if (!adapter.contract.externalEffect) {
    found.push(`${where}: compensate.adapter ${adapter.name} declares no external effect, so it cannot undo one`);
  }
  if (typeof compensate.payload !== "function") found.push(`${where}: compensate.payload must be a function of ({ input, result })`);
  const milestone = compensate.milestone ?? ({} as UndoMilestone);
  found.push(...wordProblems(`${where}: compensate.milestone.current`, milestone.current), ...wordProblems(`${where}: compensate.milestone.done`, milestone.done));
  const attemptBudget = compensate.attemptBudget ?? 5;
  if (!Number.isInteger(attemptBudget) || attemptBudget < 1 || attemptBudget > MAX_ATTEMPT_BUDGET) {
    found.push(`${where}: compensate.attemptBudget must be an integer from 1 to ${MAX_ATTEMPT_BUDGET}, got ${attemptBudget}`);
  }
  const stepClass = compensate.class ?? "external";
  if (typeof stepClass !== "string" || stepClass.length === 0 || stepClass.length > 100) found.push(`${where}: compensate.class must be a step class name`);
  problems.push(...found);
  if (found.length > 0) return null;
  return Object.freeze({
    adapter: adapter!,
    payload: compensate.payload as unknown as (source: UndoSource) => unknown,
    milestone: Object.freeze({ current: milestone.current, done: milestone.done }),
    class: stepClass,
    attemptBudget,
  });
}

/** The problems of a workflow's `compensateOn` against what its steps declare. */
export function compensateOnProblems(compensateOn: unknown, stepsThatUndo: number): string[] {
  if (compensateOn !== undefined && !COMPENSATE_ON.includes(compensateOn as CompensateOn)) {
    return [`compensateOn must be one of ${COMPENSATE_ON.map((word) => JSON.stringify(word)).join(", ")}, got ${JSON.stringify(compensateOn)}`];
  }
  const on = (compensateOn ?? "never") as CompensateOn;
  if (on !== "never" && stepsThatUndo === 0) return [`compensateOn is "${on}" but no step declares compensate: there is nothing to undo`];
  if (on === "never" && stepsThatUndo > 0) return [`${stepsThatUndo} step(s) declare compensate but compensateOn is "never": say when they run ("cancel", "failure" or "both")`];
  return [];
}
