/**
 * What a worker registers when it starts: its workflows and adapters as plain data (kinds,
 * versions, input JSON Schema, step graph, adapter contracts, milestone words). The server keeps
 * them in PostgreSQL, creates requests from them and decides recovery by their contracts; the
 * functions stay in the worker.
 */
import { cycleThrough, fairShareProblems, isAdapterChoice, type FairShare, type Milestone, type WaitDefinition, type WorkflowDefinition, workflowKey } from "./workflow";
import { rateProblems, type AdapterDefinition, type ReviewHint } from "./adapter";
import type { AdapterRate, RepetitionPolicy } from "@/lib/adapters/contract";
import { DefinitionError } from "./errors";
import { compensateOnProblems, type RegisteredCompensation } from "@/lib/compensation/definition";

export type RegisteredAdapterRef = { readonly name: string; readonly version: string };

export type RegisteredAdapter = RegisteredAdapterRef & {
  readonly idempotencyKeys: boolean;
  readonly statusQuery: boolean;
  readonly fenceEnforcement: boolean;
  readonly repetition: RepetitionPolicy;
  readonly timeoutMs: number;
  readonly concurrencyLimit: number;
  /** Calls per second the destination allows, and how many may start at once; null when it declares none. */
  readonly rate: AdapterRate | null;
  /** Where the destination's epoch is administered. A location, not a promise: not part of the shape. */
  readonly epochAdminUrl: string | null;
  /** How support can check the destination by hand. Words, not a promise: not part of the shape. */
  readonly review: ReviewHint | null;
};

export type RegisteredStepAdapter = RegisteredAdapterRef | { readonly field: string; readonly options: Readonly<Record<string, RegisteredAdapterRef>> };

export type RegisteredStep = {
  readonly name: string;
  readonly class: string;
  readonly attemptBudget: number;
  readonly dependsOn: readonly string[];
  /** Null for a pure step or a wait step. */
  readonly adapter: RegisteredStepAdapter | null;
  readonly milestone: Milestone;
  /** Present only on a wait step: its room and what the server keeps of it (an event's name and payload schema). */
  readonly wait?: WaitDefinition["registered"];
  /** Present only on a step that declares how its effect is undone, with its workflow's `compensateOn`. */
  readonly compensate?: RegisteredCompensation;
};

export type RegisteredWorkflow = {
  readonly kind: string;
  readonly version: number;
  readonly inputSchema: Record<string, unknown>;
  readonly title: string | null;
  readonly deadlineMs: number | null;
  readonly fairShare: FairShare;
  readonly steps: readonly RegisteredStep[];
};

export type Registration = { readonly workflows: readonly RegisteredWorkflow[]; readonly adapters: readonly RegisteredAdapter[] };

const refOf = (adapter: AdapterDefinition): RegisteredAdapterRef => ({ name: adapter.name, version: adapter.version });

export function registeredAdapter(adapter: AdapterDefinition<never>): RegisteredAdapter {
  const { contract } = adapter;
  return {
    name: adapter.name,
    version: adapter.version,
    idempotencyKeys: contract.idempotencyKeys,
    statusQuery: contract.statusQuery,
    fenceEnforcement: contract.fenceEnforcement,
    repetition: contract.repetition,
    timeoutMs: contract.timeoutMs,
    concurrencyLimit: contract.concurrencyLimit,
    rate: contract.rate,
    epochAdminUrl: adapter.epochAdminUrl,
    review: adapter.review,
  };
}

export function registeredWorkflow(workflow: WorkflowDefinition): RegisteredWorkflow {
  return {
    kind: workflow.kind,
    version: workflow.version,
    inputSchema: workflow.inputSchema,
    title: workflow.title,
    deadlineMs: workflow.deadlineMs,
    fairShare: workflow.fairShare,
    steps: workflow.steps.map((step) => ({
      name: step.name,
      class: step.class,
      attemptBudget: step.attemptBudget,
      dependsOn: step.dependsOn,
      adapter:
        step.adapter === null
          ? null
          : isAdapterChoice(step.adapter)
            ? { field: step.adapter.field, options: Object.fromEntries(Object.entries(step.adapter.options).map(([key, adapter]) => [key, refOf(adapter)])) }
            : refOf(step.adapter),
      milestone: step.milestone,
      // Only wait steps carry the key, so a step registered before waits existed keeps its shape.
      ...(step.wait ? { wait: step.wait.registered } : {}),
      ...(step.compensate && workflow.compensateOn !== "never"
        ? { compensate: { adapter: refOf(step.compensate.adapter), class: step.compensate.class, attemptBudget: step.compensate.attemptBudget, milestone: step.compensate.milestone, on: workflow.compensateOn } }
        : {}),
    })),
  };
}

/**
 * The registration of a set of workflows, with every adapter their steps use once. Throws a
 * DefinitionError when two workflows share a kind and version, or two adapters a name and
 * version but not their promises.
 */
export function registrationOf(workflows: readonly WorkflowDefinition[]): Registration {
  const problems: string[] = [];
  const seen = new Set<string>();
  const adapters = new Map<string, AdapterDefinition>();
  for (const workflow of workflows) {
    const key = workflowKey(workflow);
    if (seen.has(key)) problems.push(`workflow ${key} is given twice`);
    seen.add(key);
    if (workflow.steps.length === 0) problems.push(`workflow ${key} has no steps: add one with .step(), .timer(), .event() or .children()`);
    problems.push(...compensateOnProblems(workflow.compensateOn ?? "never", workflow.steps.filter((step) => step.compensate).length).map((problem) => `workflow ${key}: ${problem}`));
    for (const step of workflow.steps) {
      const own = step.adapter === null ? [] : isAdapterChoice(step.adapter) ? Object.values(step.adapter.options) : [step.adapter];
      // An undo's adapter is registered like any other: recovery decides by its contract.
      const used = step.compensate ? [...own, step.compensate.adapter] : own;
      for (const adapter of used) {
        const adapterKey = `${adapter.name}@${adapter.version}`;
        const known = adapters.get(adapterKey);
        if (known && known !== adapter) {
          for (const difference of differences(shapeOfAdapter(registeredAdapter(known)), shapeOfAdapter(registeredAdapter(adapter)))) {
            problems.push(`two adapters are named ${adapterKey} but differ: ${difference}`);
          }
          if (known.invoke !== adapter.invoke && differences(registeredAdapter(known), registeredAdapter(adapter)).length === 0) {
            // Two separately defined adapters with the same promises: one of them is what runs.
            problems.push(`adapter ${adapterKey} is defined twice; define it once and share it between workflows`);
          }
        }
        adapters.set(adapterKey, adapter);
      }
    }
  }
  if (problems.length > 0) throw new DefinitionError("worker definitions", problems);
  return { workflows: workflows.map(registeredWorkflow), adapters: [...adapters.values()].map(registeredAdapter) };
}

/** What must stay the same for an adapter name and version: everything but where its epoch is administered and how support checks it. */
export function shapeOfAdapter(adapter: RegisteredAdapter): Omit<RegisteredAdapter, "epochAdminUrl" | "review"> {
  const { epochAdminUrl: _location, review: _words, ...shape } = adapter;
  return shape;
}

const MAX_DIFFERENCES = 20;

/**
 * Where two JSON values differ, as readable paths: `steps.1.attemptBudget: 5 → 3`. Empty when
 * they are equal (object key order does not matter; array order does).
 */
export function differences(stored: unknown, presented: unknown, path = ""): string[] {
  const found: string[] = [];
  walk(stored, presented, path, found);
  return found.length > MAX_DIFFERENCES ? [...found.slice(0, MAX_DIFFERENCES), `and ${found.length - MAX_DIFFERENCES} more`] : found;
}

const show = (value: unknown): string => {
  const text = value === undefined ? "absent" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
};

function walk(stored: unknown, presented: unknown, path: string, found: string[]): void {
  const where = path === "" ? "(the whole value)" : path;
  const storedIsObject = stored !== null && typeof stored === "object";
  const presentedIsObject = presented !== null && typeof presented === "object";
  if (!storedIsObject || !presentedIsObject || Array.isArray(stored) !== Array.isArray(presented)) {
    if (stored !== presented) found.push(`${where}: ${show(stored)} → ${show(presented)}`);
    return;
  }
  if (Array.isArray(stored) && Array.isArray(presented)) {
    if (named(stored) && named(presented)) {
      // Steps and the like are compared by name, so a difference reads "steps.charge.…".
      const byName = (items: { name: string }[]) => new Map(items.map((item) => [item.name, item]));
      const [before, after] = [byName(stored), byName(presented)];
      for (const name of new Set([...before.keys(), ...after.keys()])) {
        if (!after.has(name)) found.push(`${join(path, name)}: removed`);
        else if (!before.has(name)) found.push(`${join(path, name)}: added`);
        else walk(before.get(name), after.get(name), join(path, name), found);
      }
      return;
    }
    if (stored.length !== presented.length) found.push(`${where}: ${stored.length} items → ${presented.length}`);
    for (let index = 0; index < Math.min(stored.length, presented.length); index += 1) walk(stored[index], presented[index], join(path, String(index)), found);
    return;
  }
  const a = stored as Record<string, unknown>;
  const b = presented as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], join(path, key), found);
}

const named = (items: unknown[]): items is { name: string }[] =>
  items.every((item) => item !== null && typeof item === "object" && typeof (item as { name?: unknown }).name === "string");

const join = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

/**
 * What is wrong with a registration as data (one that came over the wire rather than from
 * defineWorkflow): steps naming an adapter it does not declare, unknown dependencies, cycles,
 * duplicates. Empty when it is consistent.
 */
export function problemsOfRegistration(registration: Registration): string[] {
  const problems: string[] = [];
  const adapters = new Set<string>();
  for (const adapter of registration.adapters) {
    const key = `${adapter.name}@${adapter.version}`;
    if (adapters.has(key)) problems.push(`adapter ${key} is given twice`);
    adapters.add(key);
    if (adapter.rate !== null) problems.push(...rateProblems(adapter.rate).map((problem) => `adapter ${key}: ${problem}`));
  }
  const workflows = new Set<string>();
  for (const workflow of registration.workflows) {
    const key = workflowKey(workflow);
    if (workflows.has(key)) problems.push(`workflow ${key} is given twice`);
    workflows.add(key);
    problems.push(...fairShareProblems(workflow.fairShare).map((problem) => `workflow ${key}: ${problem}`));
    const names = new Set<string>();
    for (const step of workflow.steps) {
      if (names.has(step.name)) problems.push(`workflow ${key}: step ${step.name} is given twice`);
      names.add(step.name);
    }
    for (const step of workflow.steps) {
      for (const dependency of step.dependsOn) {
        if (!names.has(dependency)) problems.push(`workflow ${key}: step ${step.name} depends on unknown step "${dependency}"`);
      }
      if (step.wait && step.adapter !== null) problems.push(`workflow ${key}: step ${step.name} waits (${step.wait.room}), so it has no adapter of its own`);
      const refs = [...(step.adapter === null ? [] : "field" in step.adapter ? Object.values(step.adapter.options) : [step.adapter]), ...(step.compensate ? [step.compensate.adapter] : [])];
      for (const ref of refs) {
        if (!adapters.has(`${ref.name}@${ref.version}`)) problems.push(`workflow ${key}: step ${step.name} uses adapter ${ref.name}@${ref.version}, which is not registered with it`);
      }
    }
    if (problems.length === 0) {
      const cycle = cycleThrough(workflow.steps);
      if (cycle) problems.push(`workflow ${key}: steps form a cycle through "${cycle}"`);
    }
  }
  return problems;
}
