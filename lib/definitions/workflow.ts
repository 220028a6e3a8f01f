/**
 * Workflows: a kind of request, at a version, with a typed input and its steps as a DAG. Each
 * step names its step class (its lease policy), its attempt budget, the steps it waits for, the
 * words its end users see, and what it does: call an adapter (one external effect), compute (a
 * pure step, safe to run again), wait (a timer, an event) without holding anything, or start
 * child requests and wait for them to end.
 *
 * Two ways to write the steps, the same definition either way:
 *  - chained, `defineWorkflow({ kind, version, input }).step(…).timer(…).event(…)`: each step's
 *    result type reaches the steps that depend on it (`ctx.results.price.totalCents`), and a step
 *    can read only what it depends on;
 *  - a `steps` object in `defineWorkflow({ …, steps: { … } })`: compact, with results read as
 *    `unknown`.
 */
import { z } from "zod";
import { eventRegistrationOf, eventWaitRequestOf, type EventResult, type EventTimeoutPolicy, type EventWaitOptions } from "@/lib/events/definition";
import {
  childrenRegistrationOf,
  childrenRequestOf,
  type ChildFailurePolicy,
  type ChildrenOptions,
  type ChildrenResult,
} from "@/lib/children/definition";
import { timerProblems, timerRequestOf, type TimerOptions, type TimerResult } from "@/lib/timers/definition";
import { compensateOnProblems, compensationOf, type CompensateOn, type CompensateOptions, type CompensationDefinition, type LooseCompensateOptions } from "@/lib/compensation/definition";
import type { WaitRequest } from "@/lib/engine/types";
import type { AdapterDefinition } from "./adapter";
import type { StepContext, WaitContext } from "./context";
import { DefinitionError } from "./errors";
import { effect, type EffectOutcome, type ResultOf, type StepOutcome } from "./outcome";
import { engineWordsIn } from "./words";

/**
 * What the end user sees of a step, in their words: before it runs ("Payment"), while it runs
 * ("Taking payment") and after ("Payment taken"), and who it waits on ("the payment provider").
 * A timer's words may name its time as `{until}`: "We'll remind you on {until}" reads "We'll
 * remind you on 3 December at 09:00" (in the time zone the timer was given, UTC otherwise).
 * A child step's words may count its children as `{ended}` and `{total}`: "Preparing {ended} of
 * {total} parcels" reads "Preparing 3 of 5 parcels" while they run.
 */
export type Milestone = {
  readonly upcoming: string;
  readonly current: string;
  readonly done: string;
  /** Shown while the request waits on this step's destination: "We've sent your request to …". */
  readonly service?: string;
  /**
   * The headline while a person checks this step's unknown outcome, in the workflow's own words
   * ("Refund status needs checking"); "Delivery status needs review" when absent.
   */
  readonly review?: string;
};

/** One of several adapters, chosen per request by a field of its input. Made by {@link chooseAdapter}. */
export type AdapterChoice<Payload = unknown, Result = unknown> = {
  readonly field: string;
  readonly options: Readonly<Record<string, AdapterDefinition<Payload, Result>>>;
};

/** What every step takes, whatever it does: its lease policy, its dependencies, its budget and its words. */
export type StepBasics<Deps extends string = string> = {
  /** The step class, i.e. the lease policy. Defaults to `pure` for pure and wait steps and `external` otherwise. */
  readonly class?: string;
  /** Steps that must have their receipts before this one runs. */
  readonly dependsOn?: readonly Deps[];
  /** Attempts before the step gives up (or, when its outcome is unknown, goes to review). Default 5. */
  readonly attemptBudget?: number;
  readonly milestone: Milestone;
};

/** One step of a workflow, as written in `defineWorkflow({ steps })`: an adapter or pure step, a timer, or an event wait. */
export type StepOptions<Input, Payload> = StepBasics &
  (
    | {
        /** The step's destination; absent for a pure step. */
        readonly adapter?: AdapterDefinition<Payload> | AdapterChoice<Payload>;
        /**
         * The handler. It must end with an explicit outcome (`effect`, `done`, `noActionNeeded`,
         * `skip`). Required for pure steps; for an adapter step it defaults to
         * `effect(await ctx.invoke(ctx.input))`.
         */
        readonly run?: (ctx: StepContext<Input, Payload>) => Promise<StepOutcome>;
        /** How to undo this step's effect when its request is cancelled or fails (see the workflow's `compensateOn`). */
        readonly compensate?: LooseCompensateOptions<Input>;
        readonly timer?: never;
        readonly event?: never;
        readonly children?: never;
      }
    | {
        /** The step waits, holding nothing, until a time on the database clock. */
        readonly timer: TimerOptions<WaitContext<Input>>;
        readonly adapter?: never;
        readonly run?: never;
        readonly event?: never;
        readonly compensate?: never;
        readonly children?: never;
      }
    | {
        /** The step waits, holding nothing, for a named event with its correlation key. */
        readonly event: EventWaitOptions<WaitContext<Input>, unknown>;
        readonly adapter?: never;
        readonly run?: never;
        readonly timer?: never;
        readonly compensate?: never;
        readonly children?: never;
      }
    | {
        /** The step starts child requests (one, or one per element of a list) and waits, holding nothing, until they end. */
        readonly children: ChildrenOptions<WaitContext<Input>, WorkflowDefinition, unknown>;
        readonly adapter?: never;
        readonly run?: never;
        readonly timer?: never;
        readonly event?: never;
        readonly compensate?: never;
      }
  );

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

/** What {@link defineWorkflow} takes: the kind, its version, its input schema, and (in the compact form) its steps. */
export type WorkflowOptions<Kind extends string, Schema extends z.ZodType, Payloads extends Record<string, unknown>> = WorkflowHeader<Kind, Schema> & {
  /** The steps in order; the order is the milestones' order. */
  readonly steps: { readonly [Name in keyof Payloads]: StepOptions<z.output<Schema>, Payloads[Name]> };
};

/** A workflow's kind, version, input, title and deadline: {@link defineWorkflow} without `steps` starts a chain. */
export type WorkflowHeader<Kind extends string, Schema extends z.ZodType> = {
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
  /**
   * When the effects of steps that declare `compensate` are undone: when a request is cancelled,
   * when it fails, both, or never. @defaultValue "never" (a cancelled or failed request stops as it is)
   */
  readonly compensateOn?: CompensateOn;
  /**
   * Opt-in: attributes of a request's input to record on its step and attempt spans, as
   * `fenceline.input.<name>`. By default no input, payload or result reaches a span. What this
   * returns is bounded and redacted before it is recorded: at most 16 attributes, names of
   * letters, digits and `_.-` (64 at most), strings cut to 128 characters, and any attribute whose
   * name suggests a secret (token, secret, password, key, authorization, card…) replaced by
   * `[redacted]`. Runs in the worker; a throw records nothing.
   *
   * @example `traceAttributes: (input) => ({ orderId: input.orderId, amountCents: input.amountCents })`
   */
  readonly traceAttributes?: (input: z.output<Schema>) => TraceAttributes;
};

/** What a workflow's `traceAttributes` returns: names to strings, numbers or booleans. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** A wait step's room as the definition declares it: what the server keeps, and how an attempt works out its request. */
export type WaitDefinition = {
  readonly room: "timer" | "event" | "children";
  /** The static part kept with the step's registration (an event's name and payload schema). */
  readonly registered: Readonly<{ room: string } & Record<string, unknown>>;
};

/** What a wait step's handler concludes with: park, asking its room for this. Only the engine's own handlers return it. */
export type WaitOutcome = { readonly kind: "wait"; readonly wait: WaitRequest };

/** A step as {@link defineWorkflow} made it, with its defaults filled in. */
export type StepDefinition = {
  readonly name: string;
  readonly position: number;
  readonly class: string;
  readonly dependsOn: readonly string[];
  readonly attemptBudget: number;
  readonly milestone: Milestone;
  /** Null for a pure step or a wait step. */
  readonly adapter: AdapterDefinition | AdapterChoice | null;
  /** Null unless the step waits (a timer, an event). */
  readonly wait: WaitDefinition | null;
  /** The handler; a wait step's works out what to wait for and concludes with a {@link WaitOutcome}. */
  readonly run: (ctx: StepContext<unknown, unknown>) => Promise<StepOutcome | WaitOutcome>;
  /** How the step's effect is undone; null when it declares none. */
  readonly compensate: CompensationDefinition | null;
};

/** Marks what defineWorkflow made, across copies of the package (a registered symbol). */
const WORKFLOW = Symbol.for("fenceline.workflow");

/**
 * A workflow as workers run it and register it. Made by {@link defineWorkflow}. `Results` are
 * its steps' results by name, as their dependants read them (typed in the chained form).
 */
export type WorkflowDefinition<Kind extends string = string, Input = unknown, Parsed = unknown, Results = Readonly<Record<string, unknown>>> = {
  readonly kind: Kind;
  readonly version: number;
  readonly input: z.ZodType<Parsed, Input>;
  /** The input as JSON Schema (what the server validates a request with). */
  readonly inputSchema: Record<string, unknown>;
  readonly title: string | null;
  readonly deadlineMs: number | null;
  readonly fairShare: FairShare;
  /** When the steps' declared undos run. */
  readonly compensateOn: CompensateOn;
  /** The workflow's opt-in input attributes for its spans; null records none. */
  /** Called with the parsed input (typed `never` here so any workflow is a WorkflowDefinition). */
  readonly traceAttributes: ((input: never) => TraceAttributes) | null;
  readonly steps: readonly StepDefinition[];
  /** Only a type: the steps' results by name. Never set. */
  readonly results?: Results;
};

/** The input a request of workflow `W` takes (before defaults), for typed clients: `WorkflowInput<typeof checkout>`. */
export type WorkflowInput<W> = W extends WorkflowDefinition<string, infer Input, unknown, unknown> ? Input : never;

/** The results of workflow `W`'s steps by name, as the steps that depend on them read them. */
export type WorkflowResults<W> = W extends WorkflowDefinition<string, unknown, unknown, infer Results> ? Results : never;

/** The results a step that depends on `Deps` reads: those steps', and no others. */
type ResultsOf<Results, Deps extends keyof Results> = { readonly [Name in Deps]: Results[Name] };

/** A new step's name: not one the workflow already has. */
type NewName<Name extends string, Results> = Name extends keyof Results ? `a step named "${Name}" already exists` : Name;

/**
 * A workflow being built a step at a time; it is already a {@link WorkflowDefinition} (of the
 * steps so far) that workers can run. Each method returns a new definition with one more step.
 */
export type WorkflowBuilder<Kind extends string, Input, Parsed, Results> = WorkflowDefinition<Kind, Input, Parsed, Results> & {
  /**
   * An adapter step (one external effect) or a pure step (computation). Its result, what `run`
   * concludes with through `done`/`effect`, is typed for the steps that depend on it.
   */
  step<
    const Name extends string,
    const Deps extends keyof Results & string = never,
    Payload = never,
    AdapterResult = unknown,
    Outcome extends StepOutcome<unknown> = EffectOutcome<AdapterResult>,
    UndoPayload = unknown,
  >(
    name: NewName<Name, Results>,
    options: StepBasics<Deps> & {
      readonly adapter?: AdapterDefinition<Payload, AdapterResult> | AdapterChoice<Payload, AdapterResult>;
      readonly run?: (ctx: StepContext<Parsed, Payload, ResultsOf<Results, Deps>, AdapterResult>) => Promise<Outcome>;
      /** How to undo this step's effect; its payload is built from the input and this step's result. */
      readonly compensate?: CompensateOptions<Parsed, ResultOf<Outcome>, UndoPayload>;
    },
  ): WorkflowBuilder<Kind, Input, Parsed, Results & { readonly [N in Name]: ResultOf<Outcome> }>;
  /** A timer step: waits, holding nothing, until a time on the database clock; its result is `{ dueAt, firedAt }`. */
  timer<const Name extends string, const Deps extends keyof Results & string = never>(
    name: NewName<Name, Results>,
    options: StepBasics<Deps> & TimerOptions<WaitContext<Parsed, ResultsOf<Results, Deps>>>,
  ): WorkflowBuilder<Kind, Input, Parsed, Results & { readonly [N in Name]: TimerResult }>;
  /** An event wait: waits, holding nothing, for a named event with its correlation key; its result is the event. */
  event<const Name extends string, const Deps extends keyof Results & string = never, Payload = unknown, const Policy extends EventTimeoutPolicy = "fail">(
    name: NewName<Name, Results>,
    options: StepBasics<Deps> & EventWaitOptions<WaitContext<Parsed, ResultsOf<Results, Deps>>, Payload> & { readonly onTimeout?: Policy },
  ): WorkflowBuilder<Kind, Input, Parsed, Results & { readonly [N in Name]: EventResult<Payload, Policy> }>;
  /**
   * A child step: starts one request of `workflow`, or one per element of `each` (at most
   * `maxChildren`), and waits, holding nothing, until they have all ended. Its result lists every
   * child with its steps' results (typed by the child's workflow); what a failed child means is
   * `onChildFailure`. Children take the parent's app, priority and concurrency key unless
   * `overrides` says otherwise, and are cancelled with it.
   */
  children<
    const Name extends string,
    Child extends { readonly kind: string; readonly version: number },
    const Deps extends keyof Results & string = never,
    Element = undefined,
    const Policy extends ChildFailurePolicy = "fail",
  >(
    name: NewName<Name, Results>,
    options: StepBasics<Deps> & ChildrenOptions<WaitContext<Parsed, ResultsOf<Results, Deps>>, Child, Element> & { readonly onChildFailure?: Policy },
  ): WorkflowBuilder<Kind, Input, Parsed, Results & { readonly [N in Name]: ChildrenResult<Child, Policy> }>;
};

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
export function chooseAdapter<const Options extends Record<string, AdapterDefinition<never, unknown>>>(
  field: string,
  options: Options,
): AdapterChoice<
  Options[keyof Options] extends AdapterDefinition<infer Payload, unknown> ? Payload : never,
  Options[keyof Options] extends AdapterDefinition<never, infer Result> ? Result : never
> {
  return Object.freeze({ field, options: Object.freeze({ ...options }) }) as never;
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

type Header = {
  readonly kind: string;
  readonly version: number;
  readonly input: z.ZodType;
  readonly inputSchema: Record<string, unknown>;
  readonly title: string | null;
  readonly deadlineMs: number | null;
  readonly fairShare: FairShare;
  readonly compensateOn: CompensateOn;
  readonly traceAttributes: ((input: never) => TraceAttributes) | null;
};

/** Checks the kind, version, input, title and deadline; the input's JSON Schema when they are sound. */
function headerOf(options: WorkflowHeader<string, z.ZodType>, problems: string[]): Header {
  if (typeof options.kind !== "string" || !KIND_PATTERN.test(options.kind)) {
    problems.push(`kind must be 1–100 lower-case letters, digits, ".", "_" or "-", got ${JSON.stringify(options.kind)}`);
  }
  if (!Number.isInteger(options.version) || options.version < 1 || options.version > 2_147_483_647) {
    problems.push(`version must be a positive integer, got ${options.version}`);
  }
  if (!(options.input instanceof z.ZodType)) problems.push("input must be a zod schema");
  const inputSchema = options.input instanceof z.ZodType ? inputSchemaOf(options.input, problems) : {};
  const fields = fieldsOf(inputSchema);
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
  const compensateOn = options.compensateOn ?? "never";
  problems.push(...compensateOnProblems(compensateOn, compensateOn === "never" ? 0 : 1));
  if (options.traceAttributes !== undefined && typeof options.traceAttributes !== "function") problems.push("traceAttributes must be a function of the input");
  return {
    kind: options.kind,
    version: options.version,
    input: options.input,
    inputSchema,
    title: options.title ?? null,
    deadlineMs: options.deadlineMs ?? null,
    fairShare,
    compensateOn,
    traceAttributes: options.traceAttributes ?? null,
  };
}

const fieldsOf = (inputSchema: Record<string, unknown>): Set<string> => new Set(Object.keys((inputSchema.properties as Record<string, unknown> | undefined) ?? {}));

/** Makes one step, checking it against the steps before it (the compact form checks names and order once all are known). */
function stepOf(name: string, step: StepOptions<unknown, unknown>, position: number, known: ReadonlySet<string>, fields: ReadonlySet<string>, problems: string[], compensateOn: CompensateOn): StepDefinition {
  const where = `step ${name}`;
  if (!STEP_NAME.test(name)) problems.push(`${where}: a step name is a letter then up to 62 letters, digits, "_" or "-"`);
  const dependsOn = [...(step.dependsOn ?? [])];
  for (const dependency of dependsOn) if (!known.has(dependency)) problems.push(`${where} depends on unknown step "${dependency}"`);
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
    ...wordProblems(`${where}: milestone.review`, milestone.review, false),
  );
  const kinds = (["adapter", "timer", "event", "children"] as const).filter((key) => step[key] !== undefined);
  if (kinds.length > 1) problems.push(`${where}: a step is one of an adapter step, a timer, an event wait or a child step, not ${kinds.join(" and ")}`);
  const { wait, run } = waitOf(where, step, problems);
  if (wait?.room !== "timer" && Object.values(milestone).some((words) => typeof words === "string" && words.includes("{until}"))) {
    problems.push(`${where}: only a timer's milestone words can name its time with {until}`);
  }
  if (wait?.room !== "children" && Object.values(milestone).some((words) => typeof words === "string" && /\{(ended|total)\}/.test(words))) {
    problems.push(`${where}: only a child step's milestone words can count its children with {ended} and {total}`);
  }
  const adapter = wait ? null : (step.adapter ?? null);
  if (adapter !== null && isAdapterChoice(adapter)) {
    if (!fields.has(adapter.field)) problems.push(`${where}: chooseAdapter reads input.${adapter.field}, which is not a field of the input`);
    if (Object.keys(adapter.options).length === 0) problems.push(`${where}: chooseAdapter needs at least one adapter`);
  }
  if (!wait) {
    if (adapter === null && typeof step.run !== "function") problems.push(`${where}: a pure step (no adapter) needs a run function`);
    if (step.run !== undefined && typeof step.run !== "function") problems.push(`${where}: run must be a function`);
  }
  const compensate = compensationOf(
    where,
    step.compensate as CompensateOptions<never, never, never> | undefined,
    { hasAdapter: adapter !== null, isChoice: adapter !== null && isAdapterChoice(adapter), waits: wait !== null },
    (at, text) => wordProblems(at, text, true),
    problems,
  );
  if (step.compensate !== undefined && compensateOn === "never") {
    problems.push(`${where} declares compensate but the workflow's compensateOn is "never": say when it runs ("cancel", "failure" or "both")`);
  }
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
    wait,
    run: run ?? ((step.run ?? defaultRun) as StepDefinition["run"]),
    compensate,
  });
}

/** A timer's, an event wait's or a child step's definition and its handler, which works out the request and parks; nothing for other steps. */
function waitOf(where: string, step: StepOptions<unknown, unknown>, problems: string[]): { wait: WaitDefinition | null; run: StepDefinition["run"] | null } {
  if (step.timer !== undefined) {
    const timer = step.timer;
    problems.push(...timerProblems(where, timer));
    return {
      wait: { room: "timer", registered: Object.freeze({ room: "timer" }) },
      run: async (ctx) => ({ kind: "wait", wait: { room: "timer", request: await timerRequestOf(timer, ctx) } }),
    };
  }
  if (step.event !== undefined) {
    const event = step.event;
    const { problems: found, registration } = eventRegistrationOf(where, event as EventWaitOptions<never, unknown>);
    problems.push(...found);
    return {
      wait: { room: "event", registered: Object.freeze({ ...(registration ?? { room: "event" }) }) },
      run: async (ctx) => ({ kind: "wait", wait: { room: "event", request: await eventWaitRequestOf(event, ctx) } }),
    };
  }
  if (step.children !== undefined) {
    const children = step.children;
    const { problems: found, registration } = childrenRegistrationOf(where, children as ChildrenOptions<never, WorkflowDefinition, unknown>);
    problems.push(...found);
    return {
      wait: { room: "children", registered: Object.freeze({ ...(registration ?? { room: "children" }) }) },
      run: async (ctx) => ({ kind: "wait", wait: { room: "children", request: await childrenRequestOf(children, ctx) } }),
    };
  }
  return { wait: null, run: null };
}

function definitionOf(header: Header, steps: readonly StepDefinition[]): WorkflowDefinition {
  return { [WORKFLOW]: true, ...header, steps: Object.freeze([...steps]) } as WorkflowDefinition;
}

/** The chained form: a definition of the steps so far, with a method per kind of step that returns the next. */
function builderOf(header: Header, steps: readonly StepDefinition[]): WorkflowBuilder<string, unknown, unknown, Record<string, unknown>> {
  const add = (name: string, options: StepOptions<unknown, unknown>) => {
    const problems: string[] = [];
    if (steps.length >= MAX_STEPS) problems.push(`a workflow has at most ${MAX_STEPS} steps`);
    if (steps.some((existing) => existing.name === name)) problems.push(`a step named "${name}" already exists`);
    const known = new Set(steps.map((existing) => existing.name));
    const step = stepOf(name, options, steps.length, known, fieldsOf(header.inputSchema), problems, header.compensateOn);
    if (problems.length > 0) throw new DefinitionError(`workflow ${header.kind}@${header.version}`, problems);
    return builderOf(header, [...steps, step]);
  };
  return Object.freeze({
    ...definitionOf(header, steps),
    step: (name: string, options: StepOptions<unknown, unknown>) => add(name, options),
    timer: (name: string, options: StepBasics & TimerOptions) => {
      const { dependsOn, milestone, class: stepClass, attemptBudget, ...timer } = options;
      return add(name, { dependsOn, milestone, class: stepClass, attemptBudget, timer: timer as TimerOptions<WaitContext> });
    },
    event: (name: string, options: StepBasics & EventWaitOptions) => {
      const { dependsOn, milestone, class: stepClass, attemptBudget, ...event } = options;
      return add(name, { dependsOn, milestone, class: stepClass, attemptBudget, event });
    },
    children: (name: string, options: StepBasics & ChildrenOptions) => {
      const { dependsOn, milestone, class: stepClass, attemptBudget, ...children } = options;
      return add(name, { dependsOn, milestone, class: stepClass, attemptBudget, children });
    },
  }) as never;
}

/**
 * Defines a workflow. With `steps`, the whole workflow at once (results read as `unknown`);
 * without, a chain to which `.step()`, `.timer()`, `.event()` and `.children()` add steps with typed results.
 * Throws a {@link DefinitionError} naming every problem: an unknown or cyclic dependency, a pure
 * step without a handler, milestone words that would show engine vocabulary to end users, an
 * input schema that JSON Schema cannot express, a timer or event wait that cannot work.
 *
 * @example
 * ```ts
 * export const checkout = defineWorkflow({
 *   kind: "checkout", version: 1,
 *   input: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
 *   title: "Order {orderId}",
 * })
 *   .step("price", {
 *     milestone: { upcoming: "Order received", current: "Checking your order", done: "Order checked" },
 *     run: async (ctx) => done({ totalCents: ctx.input.amountCents }),
 *   })
 *   .step("charge", {
 *     adapter: payments, dependsOn: ["price"],
 *     milestone: { upcoming: "Payment", current: "Taking payment", done: "Payment taken", service: "the payment provider" },
 *     run: async (ctx) => effect(await ctx.invoke({ amountCents: ctx.results.price.totalCents })),
 *   })
 *   .event("shipped", {
 *     name: "warehouse.shipped", key: (ctx) => ctx.input.orderId, timeoutMs: 2 * 86_400_000, dependsOn: ["charge"],
 *     milestone: { upcoming: "Shipping", current: "Waiting for the warehouse to ship", done: "Shipped" },
 *   });
 * ```
 */
export function defineWorkflow<const Kind extends string, Schema extends z.ZodType, Payloads extends Record<string, unknown> = never>(
  options: WorkflowHeader<Kind, Schema> & { readonly steps?: { readonly [Name in keyof Payloads]: StepOptions<z.output<Schema>, Payloads[Name]> } },
): [Payloads] extends [never] ? WorkflowBuilder<Kind, z.input<Schema>, z.output<Schema>, {}> : WorkflowDefinition<Kind, z.input<Schema>, z.output<Schema>>;
export function defineWorkflow(options: WorkflowHeader<string, z.ZodType> & { readonly steps?: Record<string, StepOptions<unknown, unknown>> }): WorkflowDefinition {
  const problems: string[] = [];
  const header = headerOf(options, problems);
  if (options.steps === undefined) {
    if (problems.length > 0) throw new DefinitionError(`workflow ${options.kind}@${options.version}`, problems);
    return builderOf(header, []);
  }
  const entries = Object.entries(options.steps ?? {});
  if (entries.length === 0) problems.push("a workflow needs at least one step");
  if (entries.length > MAX_STEPS) problems.push(`a workflow has at most ${MAX_STEPS} steps, got ${entries.length}`);
  const names = new Set(entries.map(([name]) => name));
  const fields = fieldsOf(header.inputSchema);
  const steps = entries.map(([name, step], position) => stepOf(name, step, position, names, fields, problems, header.compensateOn));
  if (header.compensateOn !== "never" && problems.length === 0) problems.push(...compensateOnProblems(header.compensateOn, steps.filter((step) => step.compensate).length));
  const cycle = problems.length === 0 ? cycleThrough(steps) : null;
  if (cycle) problems.push(`steps form a cycle through "${cycle}"`);
  if (problems.length > 0) throw new DefinitionError(`workflow ${options.kind}@${options.version}`, problems);
  return Object.freeze(definitionOf(header, steps));
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
