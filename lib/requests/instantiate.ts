/**
 * From a registered workflow version and a request's input to the workflow draft the engine
 * writes: the input is checked against the version's JSON Schema (defaults filled in), each step
 * takes its adapter (or the one the input chooses), class, budget and dependencies, and the
 * request's deadline is the caller's or the definition's.
 */
import type { RegisteredWorkflow } from "@/lib/definitions/registration";
import { InvalidInputError } from "@/lib/engine/errors";
import type { StepDraft, WorkflowDraft } from "@/lib/engine/workflow";
import { issuesOf, validatorFor } from "./json-schema";

export type InstantiateOptions = {
  readonly requester: string;
  readonly idempotencyKey: string | null;
  /** The caller's deadline; without one, the definition's `deadlineMs` after creation, if it has one. */
  readonly deadlineAt: Date | null;
  /** The caller's priority; without one, the definition's. */
  readonly priority?: number | null;
  readonly concurrencyKey?: string | null;
};

/** Validates `input` and builds the draft; throws InvalidInputError naming every offending field. */
export function instantiateWorkflow(workflow: RegisteredWorkflow, input: unknown, options: InstantiateOptions): WorkflowDraft {
  const subject = `${workflow.kind}@${workflow.version}`;
  // The validator fills defaults in place: work on a copy, so the caller's value stays as sent.
  const value: unknown = input === undefined ? undefined : structuredClone(input);
  const validate = validatorFor(subject, workflow.inputSchema);
  if (!validate(value)) throw new InvalidInputError(subject, issuesOf(validate.errors));

  const steps: StepDraft[] = workflow.steps.map((step) => {
    let adapter = step.adapter;
    if (adapter !== null && "field" in adapter) {
      const choice = (value as Record<string, unknown> | null)?.[adapter.field];
      const chosen = typeof choice === "string" && Object.hasOwn(adapter.options, choice) ? adapter.options[choice] : undefined;
      if (!chosen) {
        throw new InvalidInputError(subject, [{ path: adapter.field, message: `must be one of ${Object.keys(adapter.options).map((key) => JSON.stringify(key)).join(", ")}` }]);
      }
      adapter = chosen;
    }
    // A wait step runs on its room's built-in adapter (fenceline.timer, fenceline.event).
    const builtIn = step.wait ? `fenceline.${step.wait.room}` : "pure";
    return {
      name: step.name,
      adapter: adapter === null ? builtIn : adapter.name,
      adapterVersion: adapter === null ? "1" : adapter.version,
      stepClass: step.class,
      attemptBudget: step.attemptBudget,
      dependsOn: step.dependsOn,
    };
  });
  return {
    kind: workflow.kind,
    version: workflow.version,
    input: value ?? null,
    requester: options.requester,
    idempotencyKey: options.idempotencyKey,
    deadlineAt: options.deadlineAt,
    deadlineMs: workflow.deadlineMs,
    priority: options.priority ?? workflow.fairShare.priority,
    concurrencyKey: options.concurrencyKey ?? null,
    steps,
  };
}
