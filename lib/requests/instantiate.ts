/**
 * From a registered workflow version and a request's input to the workflow draft the engine
 * writes: the input is checked against the version's JSON Schema (defaults filled in), each step
 * takes its adapter (or the one the input chooses), class, budget and dependencies, and the
 * request's deadline is the caller's or the definition's.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import type { RegisteredWorkflow } from "@/lib/definitions/registration";
import { InvalidInputError, type InputIssue } from "@/lib/engine/errors";
import type { StepDraft, WorkflowDraft } from "@/lib/engine/workflow";

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });

/** Compiled validators per registered version; a version's schema never changes once stored. */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 500;

function validatorFor(workflow: RegisteredWorkflow): ValidateFunction {
  const key = `${workflow.kind}@${workflow.version}`;
  let validate = validators.get(key);
  if (!validate) {
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value!);
    validate = ajv.compile(workflow.inputSchema);
    validators.set(key, validate);
  }
  return validate;
}

function issueOf(error: ErrorObject): InputIssue {
  const path = error.instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return { path: [...path, String(params.missingProperty)].join("."), message: "is required" };
  if (error.keyword === "additionalProperties") {
    return { path: [...path, String(params.additionalProperty)].join("."), message: "is not a field of this input" };
  }
  if (error.keyword === "enum") return { path: path.join("."), message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}` };
  return { path: path.join("."), message: error.message ?? `fails ${error.keyword}` };
}

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
  const validate = validatorFor(workflow);
  if (!validate(value)) throw new InvalidInputError(subject, (validate.errors ?? []).map(issueOf));

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
    return {
      name: step.name,
      adapter: adapter === null ? "pure" : adapter.name,
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
