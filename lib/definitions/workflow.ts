/**
 * Workflows: a kind of request, at a version, with a typed input and its steps as a DAG. Each
 * step names its step class (its lease policy), its attempt budget, the steps it waits for, the
 * words its end users see, and either an adapter (a step with one external effect) or nothing
 * (a pure step: computation, safe to run again).
 */
import { z } from "zod";
import type { AdapterDefinition } from "./adapter";
import type { StepContext } from "./context";
import { DefinitionError } from "./errors";
import { effect, type StepOutcome } from "./outcome";
import { engineWordsIn } from "./words";

/**
 * What the end user sees of a step, in their words: before it runs ("Payment"), while it runs
 * ("Taking payment") and after ("Payment taken"), and who it waits on ("the payment provider").
 */
export type Milestone = {
  readonly upcoming: string;
  readonly current: string;
  readonly done: string;
  /** Shown while the request waits on this step's destination: "We've sent your request to …". */
  readonly service?: string;
};

/** One of several adapters, chosen per request by a field of its input. Made by {@link chooseAdapter}. */
export type AdapterChoice<Payload = unknown> = {
  readonly field: string;
  readonly options: Readonly<Record<string, AdapterDefinition<Payload>>>;
};

/** One step of a workflow, as written in `defineWorkflow({ steps })`. */
export type StepOptions<Input, Payload> = {
  /** The step's destination; absent for a pure step. */
  readonly adapter?: AdapterDefinition<Payload> | AdapterChoice<Payload>;
  /** The step class, i.e. the lease policy. Defaults to `pure` for pure steps and `external` otherwise. */
  readonly class?: string;
  /** Steps that must have their receipts before this one runs. */
  readonly dependsOn?: readonly string[];
  /** Attempts before the step gives up (or, when its outcome is unknown, goes to review). Default 5. */
  readonly attemptBudget?: number;
  readonly milestone: Milestone;
  /**
   * The handler. It must end with an explicit outcome (`effect`, `done`, `noActionNeeded`,
   * `skip`). Required for pure steps; for an adapter step it defaults to
   * `effect(await ctx.invoke(ctx.input))`.
   */
  readonly run?: (ctx: StepContext<Input, Payload>) => Promise<StepOutcome>;
};

/**
 * How the claim shares workers between a kind's concurrency keys (the tenants or customers an app
 * names per request, `concurrencyKey`), and the kind's default priority.
 *
 * - `round-robin`: keys take turns. A request takes its place one turn after its key's previous
 *   request, so with one key holding 10,000 waiting requests and another holding 10, the other's
 *   i-th request waits for at most i requests of each key with work ahead of it.
 * - `oldest-first`: keys do not change the order; requests are taken oldest first (the limit per
 *   key still applies).
 *
 * Priority comes first: a request of a higher priority is claimed before any of a lower one,
 * whatever its key; the turns are taken among requests of the same priority. A request without a
 * key is a key of its own.
 */
export type Fairness = (typeof FAIRNESS_RULES)[number];

/** What `defineWorkflow({ fairShare })` takes. */
export type FairShareOptions = {
  /**
   * Steps of one concurrency key in flight at once (ready to claim, running, or waiting to retry).
   * Beyond it a step waits behind its key, holding no lease, until one of its key's steps ends.
   * No limit by default.
   */
  readonly limitPerKey?: number;
  /** How keys share the workers. @defaultValue "round-robin" */
  readonly fairness?: Fairness;
  /** The priority of this kind's requests that do not name one: 1–9, higher first. @defaultValue 5 */
  readonly priority?: number;
};

/** A kind's fair share with its defaults filled in. An admin may override `limitPerKey` and `fairness`. */
export type FairShare = {
  readonly limitPerKey: number | null;
  readonly fairness: Fairness;
  readonly priority: number;
};

export const FAIRNESS_RULES = ["round-robin", "oldest-first"] as const;
export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = 9;
export const DEFAULT_PRIORITY = 5;
/** A request's concurrency key is 1–200 characters. */
export const MAX_CONCURRENCY_KEY_LENGTH = 200;
/** The largest limit per key a kind may declare. */
export const MAX_LIMIT_PER_KEY = 10_000;
export const DEFAULT_FAIR_SHARE: FairShare = Object.freeze({ limitPerKey: null, fairness: "round-robin", priority: DEFAULT_PRIORITY });

/** What {@link defineWorkflow} takes: the kind, its version, its input schema and its steps. */
export type WorkflowOptions<Kind extends string, Schema extends z.ZodType, Payloads extends Record<string, unknown>> = {
  /** Lower-case letters, digits, `.`, `_` and `-`. */
  readonly kind: Kind;
  /** A positive integer. A change of steps, input or words needs a new version. */
  readonly version: number;
  /** The request's input; validated by the server (as JSON Schema) and parsed by the worker. */
  readonly input: Schema;
  /** The end user's title, with `{field}` taken from the input: `"Order {orderId}"`. Default "Your request". */
  readonly title?: string;
  /** How long a request stays useful, in milliseconds; none by default. */
  readonly deadlineMs?: number;
  /** Limit per concurrency key, how keys share the workers, default priority: see {@link FairShareOptions}. */
  readonly fairShare?: FairShareOptions;
  /** The steps in order; the order is the milestones' order. */
  readonly steps: { readonly [Name in keyof Payloads]: StepOptions<z.output<Schema>, Payloads[Name]> };
};

/** A step as {@link defineWorkflow} made it, with its defaults filled in. */
export type StepDefinition = {
  readonly name: string;
  readonly position: number;
  readonly class: string;
  readonly dependsOn: readonly string[];
  readonly attemptBudget: number;
  readonly milestone: Milestone;
  /** Null for a pure step. */
  readonly adapter: AdapterDefinition | AdapterChoice | null;
  readonly run: (ctx: StepContext<unknown, unknown>) => Promise<StepOutcome>;
};

/** Marks what defineWorkflow made, across copies of the package (a registered symbol). */
const WORKFLOW = Symbol.for("fenceline.workflow");

/** A workflow as workers run it and register it. Made by {@link defineWorkflow}. */
export type WorkflowDefinition<Kind extends string = string, Input = unknown, Parsed = unknown> = {
  readonly kind: Kind;
  readonly version: number;
  readonly input: z.ZodType<Parsed, Input>;
  /** The input as JSON Schema (what the server validates a request with). */
  readonly inputSchema: Record<string, unknown>;
  readonly title: string | null;
  readonly deadlineMs: number | null;
  readonly fairShare: FairShare;
  readonly steps: readonly StepDefinition[];
};

/** The input a request of workflow `W` takes (before defaults), for typed clients: `WorkflowInput<typeof checkout>`. */
export type WorkflowInput<W> = W extends WorkflowDefinition<string, infer Input, unknown> ? Input : never;

export const MAX_STEPS = 64;
const MAX_ATTEMPT_BUDGET = 1_000;
const MAX_WORDS = 200;
/** A kind: 1–100 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const KIND_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const STEP_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Lets a request's input choose the step's adapter: `chooseAdapter("deliverVia", { email, sms })`
 * runs the step on `email` when `input.deliverVia` is `"email"`. The input schema should make the
 * field one of the option names (a `z.enum`).
 */
export function chooseAdapter<const Options extends Record<string, AdapterDefinition<never>>>(
  field: string,
  options: Options,
): AdapterChoice<Options[keyof Options] extends AdapterDefinition<infer Payload> ? Payload : never> {
  return Object.freeze({ field, options: Object.freeze({ ...options }) }) as unknown as AdapterChoice<Options[keyof Options] extends AdapterDefinition<infer Payload> ? Payload : never>;
}

export const isAdapterChoice = (adapter: AdapterDefinition | AdapterChoice): adapter is AdapterChoice => "field" in adapter && "options" in adapter;

/** Every adapter a step may run on. */
export const adaptersOf = (step: StepDefinition): readonly AdapterDefinition[] =>
  step.adapter === null ? [] : isAdapterChoice(step.adapter) ? Object.values(step.adapter.options) : [step.adapter];

function wordProblems(where: string, text: string | undefined, required: boolean): string[] {
  if (text === undefined) return required ? [`${where} is required`] : [];
  if (typeof text !== "string" || text.trim() === "") return [`${where} must be a non-empty string`];
  if (text.length > MAX_WORDS) return [`${where} must be at most ${MAX_WORDS} characters`];
  const engineWords = engineWordsIn(text);
  return engineWords.length > 0 ? [`${where} ${JSON.stringify(text)} uses engine words (${engineWords.join(", ")}) that end users must never see`] : [];
}

function inputSchemaOf(input: z.ZodType, problems: string[]): Record<string, unknown> {
  try {
    return z.toJSONSchema(input, { io: "input", unrepresentable: "throw" }) as Record<string, unknown>;
  } catch (error) {
    problems.push(`input cannot be expressed as JSON Schema, which the server validates requests with: ${error instanceof Error ? error.message : String(error)}`);
    return {};
  }
}

/** A step name on a dependency cycle, or null when the steps form a DAG. */
export function cycleThrough(steps: readonly { name: string; dependsOn: readonly string[] }[]): string | null {
  const dependsOn = new Map(steps.map((step) => [step.name, step.dependsOn]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (name: string): string | null => {
    if (done.has(name)) return null;
    if (visiting.has(name)) return name;
    visiting.add(name);
    for (const next of dependsOn.get(name) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    visiting.delete(name);
    done.add(name);
    return null;
  };
  for (const step of steps) {
    const cycle = visit(step.name);
    if (cycle) return cycle;
  }
  return null;
}

const defaultRun = async (ctx: StepContext<unknown, unknown>): Promise<StepOutcome> => effect(await ctx.invoke(ctx.input));

/**
 * Defines a workflow. Throws a {@link DefinitionError} naming every problem: an unknown or
 * cyclic dependency, a pure step without a handler, milestone words that would show engine
 * vocabulary to end users, an input schema that JSON Schema cannot express.
 *
 * @example
 * ```ts
 * export const checkout = defineWorkflow({
 *   kind: "checkout", version: 1,
 *   input: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
 *   title: "Order {orderId}",
 *   steps: {
 *     price: { milestone: { upcoming: "Order received", current: "Checking your order", done: "Order checked" },
 *              run: async (ctx) => done({ total: ctx.input.amountCents }) },
 *     charge: { adapter: payments, dependsOn: ["price"],
 *               milestone: { upcoming: "Payment", current: "Taking payment", done: "Payment taken", service: "the payment provider" },
 *               run: async (ctx) => effect(await ctx.invoke({ amountCents: ctx.input.amountCents })) },
 *   },
 * });
 * ```
 */
export function defineWorkflow<const Kind extends string, Schema extends z.ZodType, Payloads extends Record<string, unknown>>(
  options: WorkflowOptions<Kind, Schema, Payloads>,
): WorkflowDefinition<Kind, z.input<Schema>, z.output<Schema>> {
  const problems: string[] = [];
  if (typeof options.kind !== "string" || !KIND_PATTERN.test(options.kind)) {
    problems.push(`kind must be 1–100 lower-case letters, digits, ".", "_" or "-", got ${JSON.stringify(options.kind)}`);
  }
  if (!Number.isInteger(options.version) || options.version < 1 || options.version > 2_147_483_647) {
    problems.push(`version must be a positive integer, got ${options.version}`);
  }
  if (!(options.input instanceof z.ZodType)) problems.push("input must be a zod schema");
  const inputSchema = options.input instanceof z.ZodType ? inputSchemaOf(options.input, problems) : {};
  const fields = new Set(Object.keys((inputSchema.properties as Record<string, unknown> | undefined) ?? {}));

  if (options.title !== undefined) {
    problems.push(...wordProblems("title", options.title, true));
    for (const [, field] of (options.title ?? "").matchAll(PLACEHOLDER)) {
      if (!fields.has(field!)) problems.push(`title uses {${field}}, which is not a field of the input`);
    }
  }
  if (options.deadlineMs !== undefined && (!Number.isInteger(options.deadlineMs) || options.deadlineMs < 1)) {
    problems.push(`deadlineMs must be a positive integer, got ${options.deadlineMs}`);
  }

  const fairShare = fairShareOf(options.fairShare, problems);

  const entries = Object.entries(options.steps ?? {}) as [string, StepOptions<unknown, unknown>][];
  if (entries.length === 0) problems.push("a workflow needs at least one step");
  if (entries.length > MAX_STEPS) problems.push(`a workflow has at most ${MAX_STEPS} steps, got ${entries.length}`);
  const names = new Set(entries.map(([name]) => name));
  const steps: StepDefinition[] = entries.map(([name, step], position) => {
    const where = `step ${name}`;
    if (!STEP_NAME.test(name)) problems.push(`${where}: a step name is a letter then up to 62 letters, digits, "_" or "-"`);
    const dependsOn = [...(step.dependsOn ?? [])];
    for (const dependency of dependsOn) if (!names.has(dependency)) problems.push(`${where} depends on unknown step "${dependency}"`);
    const attemptBudget = step.attemptBudget ?? 5;
    if (!Number.isInteger(attemptBudget) || attemptBudget < 1 || attemptBudget > MAX_ATTEMPT_BUDGET) {
      problems.push(`${where}: attemptBudget must be an integer from 1 to ${MAX_ATTEMPT_BUDGET}, got ${attemptBudget}`);
    }
    const milestone = step.milestone ?? ({} as Milestone);
    problems.push(
      ...wordProblems(`${where}: milestone.upcoming`, milestone.upcoming, true),
      ...wordProblems(`${where}: milestone.current`, milestone.current, true),
      ...wordProblems(`${where}: milestone.done`, milestone.done, true),
      ...wordProblems(`${where}: milestone.service`, milestone.service, false),
    );
    const adapter = step.adapter ?? null;
    if (adapter !== null && isAdapterChoice(adapter)) {
      if (!fields.has(adapter.field)) problems.push(`${where}: chooseAdapter reads input.${adapter.field}, which is not a field of the input`);
      if (Object.keys(adapter.options).length === 0) problems.push(`${where}: chooseAdapter needs at least one adapter`);
    }
    if (adapter === null && typeof step.run !== "function") problems.push(`${where}: a pure step (no adapter) needs a run function`);
    if (step.run !== undefined && typeof step.run !== "function") problems.push(`${where}: run must be a function`);
    const stepClass = step.class ?? (adapter === null ? "pure" : "external");
    if (typeof stepClass !== "string" || stepClass.length === 0 || stepClass.length > 100) problems.push(`${where}: class must be a step class name`);
    return Object.freeze({
      name,
      position,
      class: stepClass,
      dependsOn: Object.freeze(dependsOn),
      attemptBudget,
      milestone: Object.freeze({ ...milestone }),
      adapter,
      run: (step.run ?? defaultRun) as StepDefinition["run"],
    });
  });
  const cycle = problems.length === 0 ? cycleThrough(steps) : null;
  if (cycle) problems.push(`steps form a cycle through "${cycle}"`);
  if (problems.length > 0) throw new DefinitionError(`workflow ${options.kind}@${options.version}`, problems);

  return Object.freeze({
    [WORKFLOW]: true,
    kind: options.kind,
    version: options.version,
    input: options.input as unknown as z.ZodType<z.output<Schema>, z.input<Schema>>,
    inputSchema,
    title: options.title ?? null,
    deadlineMs: options.deadlineMs ?? null,
    fairShare,
    steps: Object.freeze(steps),
  });
}

/** The problems of a fair-share value (as defined, or as it came over the wire), or none. */
export function fairShareProblems(fairShare: { limitPerKey?: unknown; fairness?: unknown; priority?: unknown }): string[] {
  const problems: string[] = [];
  const { limitPerKey, fairness, priority } = fairShare;
  if (limitPerKey !== undefined && limitPerKey !== null && (!Number.isInteger(limitPerKey) || (limitPerKey as number) < 1 || (limitPerKey as number) > MAX_LIMIT_PER_KEY)) {
    problems.push(`fairShare.limitPerKey must be an integer from 1 to ${MAX_LIMIT_PER_KEY}, got ${JSON.stringify(limitPerKey)}`);
  }
  if (fairness !== undefined && !FAIRNESS_RULES.includes(fairness as Fairness)) {
    problems.push(`fairShare.fairness must be one of ${FAIRNESS_RULES.map((rule) => JSON.stringify(rule)).join(", ")}, got ${JSON.stringify(fairness)}`);
  }
  if (priority !== undefined && (!Number.isInteger(priority) || (priority as number) < MIN_PRIORITY || (priority as number) > MAX_PRIORITY)) {
    problems.push(`fairShare.priority must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}, got ${JSON.stringify(priority)}`);
  }
  return problems;
}

function fairShareOf(options: FairShareOptions | undefined, problems: string[]): FairShare {
  if (options === undefined) return DEFAULT_FAIR_SHARE;
  if (options === null || typeof options !== "object") {
    problems.push("fairShare must be an object");
    return DEFAULT_FAIR_SHARE;
  }
  problems.push(...fairShareProblems(options));
  return Object.freeze({
    limitPerKey: options.limitPerKey ?? null,
    fairness: options.fairness ?? DEFAULT_FAIR_SHARE.fairness,
    priority: options.priority ?? DEFAULT_FAIR_SHARE.priority,
  });
}

/** `kind@version`, the name a workflow version goes by everywhere. */
export const workflowKey = (workflow: { kind: string; version: number }): string => `${workflow.kind}@${workflow.version}`;

/** Whether `value` is a workflow made by defineWorkflow. */
export const isWorkflowDefinition = (value: unknown): value is WorkflowDefinition =>
  typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[WORKFLOW] === true;

/** The workflows a definitions module exports, in export order; arrays of workflows count too. */
export function workflowsExportedBy(module: Record<string, unknown>): WorkflowDefinition[] {
  const found: WorkflowDefinition[] = [];
  for (const value of Object.values(module)) {
    for (const candidate of Array.isArray(value) ? value : [value]) {
      if (isWorkflowDefinition(candidate) && !found.includes(candidate)) found.push(candidate);
    }
  }
  return found;
}
