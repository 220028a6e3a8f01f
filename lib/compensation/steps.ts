/**
 * The step a worker runs to undo another: named `<step>.undo`, on the undo's own adapter, depending
 * on the step it undoes so that step's receipt (its result and external reference) reaches it. Its
 * handler builds the payload from the input and that receipt and invokes the adapter once, like
 * any effect step.
 */
import type { StepDefinition } from "@/lib/definitions/workflow";
import { effect } from "@/lib/definitions/outcome";
import { undoStepName } from "./definition";

/** Position of undo steps after their request's own, so the views list them last. */
export const UNDO_POSITION_BASE = 1_000;

/** The undo step of `step`, or null when it declares none. */
export function undoStepOf(step: StepDefinition): StepDefinition | null {
  const compensate = step.compensate;
  if (!compensate) return null;
  return Object.freeze({
    name: undoStepName(step.name),
    position: UNDO_POSITION_BASE + step.position,
    class: compensate.class,
    dependsOn: Object.freeze([step.name]),
    attemptBudget: compensate.attemptBudget,
    milestone: Object.freeze({ upcoming: compensate.milestone.current, current: compensate.milestone.current, done: compensate.milestone.done }),
    adapter: compensate.adapter,
    wait: null,
    compensate: null,
    run: async (ctx) => effect(await ctx.invoke(compensate.payload({ input: ctx.input, result: ctx.results[step.name] ?? null, externalReference: ctx.externalReferences[step.name] ?? null }))),
  });
}
