/**
 * Child-request steps as an adopter writes them: start one request of a registered workflow, or
 * one per element of a list computed from the input and earlier results (fan-out), and complete
 * when they have all ended, with their results. The worker works out the children's inputs (the
 * request); the server writes the children in the parking transaction and settles the step when
 * they end (lib/children/room.ts).
 */
import { z } from "zod";
import type { WaitContext } from "@/lib/definitions/context";
import type { WorkflowDefinition } from "@/lib/definitions/workflow";

// lib/definitions/workflow.ts imports this module: its values are repeated here, not imported.
const MIN_PRIORITY = 1;
const MAX_PRIORITY = 9;
const MAX_CONCURRENCY_KEY_LENGTH = 200;
const isWorkflowDefinition = (value: unknown): value is WorkflowDefinition =>
  typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[Symbol.for("fenceline.workflow")] === true;

/**
 * The fan-out bound: a step starts at most 1,000 children. A step may declare a lower bound of its
 * own (`maxChildren`); a list past the step's bound fails the attempt, naming both numbers, and
 * writes nothing.
 */
export const MAX_CHILDREN = 1_000;
/** A step's bound when it declares none. */
export const DEFAULT_MAX_CHILDREN = 100;

/** What a failed child means for its parent step: `fail` fails the step (and the parent request); `collect` keeps it as one of the results. */
export type ChildFailurePolicy = "fail" | "collect";

/** What a child takes from its parent unless the step says otherwise: its priority and its concurrency key (and always its app). */
export type ChildOverrides = {
  /** 1–9; the parent's priority when absent. */
  readonly priority?: number;
  /** The tenant the child counts against; the parent's key when absent, none when null. */
  readonly concurrencyKey?: string | null;
};

/** A child step, as a step declares it. `Element` is one element of the fanned-out list. */
export type ChildrenOptions<Ctx = WaitContext, Child = WorkflowDefinition, Element = unknown> = {
  /** The workflow each child runs (made by `defineWorkflow`); the child pins its version. */
  readonly workflow: Child;
  /**
   * The list to fan out over: one child per element, in order. Absent: one child. Computed from
   * the input and earlier results; past the step's `maxChildren` the attempt fails.
   */
  readonly each?: (ctx: Ctx) => readonly Element[] | Promise<readonly Element[]>;
  /** The child's input, from the step's context and (with `each`) the element and its index. */
  readonly input: (ctx: Ctx, element: Element, index: number) => ChildInput<Child> | Promise<ChildInput<Child>>;
  /** What a failed (or otherwise ended) child means: `fail` (the default) fails this step; `collect` keeps it in the results. */
  readonly onChildFailure?: ChildFailurePolicy;
  /** This step's fan-out bound, from 1 to {@link MAX_CHILDREN}. Default {@link DEFAULT_MAX_CHILDREN}. */
  readonly maxChildren?: number;
  /** Priority and concurrency key of a child, when not its parent's. */
  readonly overrides?: (ctx: Ctx, element: Element, index: number) => ChildOverrides;
};

/** The input a child of workflow `Child` takes (before its schema's defaults). */
/** The input a child workflow takes: its input schema's output type, or `unknown` for a workflow not typed here. */
export type ChildInput<Child> = Child extends { readonly input: z.ZodType<unknown, infer Input> } ? Input : unknown;
/** The results of workflow `Child`'s steps by name, as its definition types them. */
/** The results a completed child carries: its workflow's step results by name, as typed as its definition allows. */
export type ChildResults<Child> = Child extends { readonly results?: infer Results } ? NonNullable<Results> : Readonly<Record<string, unknown>>;

/** A child that completed: its request and its steps' results by name (typed by the child's workflow). */
export type CompletedChild<Child = WorkflowDefinition> = {
  readonly index: number;
  readonly requestId: string;
  readonly status: "completed";
  readonly results: ChildResults<Child>;
};

/** A child that ended without completing (only with `onChildFailure: "collect"`): how it ended, and why. */
export type EndedChild = {
  readonly index: number;
  readonly requestId: string;
  readonly status: "failed" | "cancelled";
  readonly reason: string | null;
};

/** What a child step's dependants read of it (`ctx.results.<step>`): every child in list order, and the counts. */
export type ChildrenResult<Child = WorkflowDefinition, Policy extends ChildFailurePolicy = "fail"> = {
  readonly children: readonly (Policy extends "collect" ? CompletedChild<Child> | EndedChild : CompletedChild<Child>)[];
  readonly completed: number;
  readonly failed: number;
};

/** What a child step registers: the child's workflow, the failure policy, the bound. */
export type ChildrenRegistration = {
  readonly room: "children";
  readonly workflow: { readonly kind: string; readonly version: number };
  readonly onChildFailure: ChildFailurePolicy;
  readonly maxChildren: number;
};

export const childrenRegistrationSchema = z.object({
  room: z.literal("children"),
  workflow: z.object({ kind: z.string().min(1).max(100), version: z.number().int().min(1) }),
  onChildFailure: z.enum(["fail", "collect"]),
  maxChildren: z.number().int().min(1).max(MAX_CHILDREN),
});

/** One child as the attempt asks for it. */
export type ChildRequest = { readonly input: unknown; readonly priority?: number; readonly concurrencyKey?: string | null };

/** What a child step's attempt asks its room for. */
export type ChildrenRequest = {
  readonly workflow: { readonly kind: string; readonly version: number };
  readonly onChildFailure: ChildFailurePolicy;
  readonly children: readonly ChildRequest[];
};

export const childrenRequestSchema = z.object({
  workflow: z.object({ kind: z.string().min(1).max(100), version: z.number().int().min(1) }),
  onChildFailure: z.enum(["fail", "collect"]),
  children: z
    .array(
      z.object({
        input: z.unknown(),
        priority: z.number().int().min(MIN_PRIORITY).max(MAX_PRIORITY).optional(),
        concurrencyKey: z.string().min(1).max(MAX_CONCURRENCY_KEY_LENGTH).nullable().optional(),
      }),
    )
    .min(1, "a child step starts at least one child")
    .max(MAX_CHILDREN, `a child step starts at most ${MAX_CHILDREN} children`),
});

/** The problems of a child step's options, as `defineWorkflow` reports them; the registration when there are none. */
export function childrenRegistrationOf(where: string, options: ChildrenOptions<never, WorkflowDefinition, unknown>): { problems: string[]; registration: ChildrenRegistration | null } {
  if (options === null || typeof options !== "object") return { problems: [`${where}: children must be { workflow, input, … }`], registration: null };
  const problems: string[] = [];
  if (!isWorkflowDefinition(options.workflow)) problems.push(`${where}: children.workflow must be a workflow made by defineWorkflow`);
  if (typeof options.input !== "function") problems.push(`${where}: children.input must be a function of the step's context`);
  if (options.each !== undefined && typeof options.each !== "function") problems.push(`${where}: children.each must be a function of the step's context`);
  if (options.overrides !== undefined && typeof options.overrides !== "function") problems.push(`${where}: children.overrides must be a function`);
  if (options.onChildFailure !== undefined && options.onChildFailure !== "fail" && options.onChildFailure !== "collect") {
    problems.push(`${where}: children.onChildFailure must be "fail" or "collect", got ${JSON.stringify(options.onChildFailure)}`);
  }
  const maxChildren = options.maxChildren ?? DEFAULT_MAX_CHILDREN;
  if (!Number.isInteger(maxChildren) || maxChildren < 1 || maxChildren > MAX_CHILDREN) {
    problems.push(`${where}: children.maxChildren must be an integer from 1 to ${MAX_CHILDREN}, got ${JSON.stringify(options.maxChildren)}`);
  }
  if (problems.length > 0) return { problems, registration: null };
  return {
    problems,
    registration: {
      room: "children",
      workflow: { kind: options.workflow.kind, version: options.workflow.version },
      onChildFailure: options.onChildFailure ?? "fail",
      maxChildren,
    },
  };
}

/**
 * Works out a child step's request from its options and the step's context: the list (or one
 * child), each child's input and overrides. Throws naming what is wrong; a list past the bound is
 * refused before anything is sent.
 */
export async function childrenRequestOf(options: ChildrenOptions<WaitContext, WorkflowDefinition, unknown>, ctx: WaitContext): Promise<ChildrenRequest> {
  const maxChildren = options.maxChildren ?? DEFAULT_MAX_CHILDREN;
  const elements: readonly unknown[] = options.each ? await options.each(ctx) : [undefined];
  if (!Array.isArray(elements)) throw new Error(`children.each must return an array, got ${typeof elements}`);
  if (elements.length === 0) throw new Error("children.each returned an empty list: a child step starts at least one child");
  if (elements.length > maxChildren) {
    throw new Error(`children.each returned ${elements.length} elements, past this step's fan-out bound of ${maxChildren} (children.maxChildren, at most ${MAX_CHILDREN})`);
  }
  const children: ChildRequest[] = [];
  for (const [index, element] of elements.entries()) {
    const input = await options.input(ctx, element, index);
    const parsed = options.workflow.input.safeParse(input);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${["input", ...issue.path].join(".")}: ${issue.message}`).join("; ");
      throw new Error(`children[${index}]: the input does not match ${options.workflow.kind}@${options.workflow.version}'s input schema: ${issues}`);
    }
    const overrides = options.overrides?.(ctx, element, index) ?? {};
    // The raw input goes to the server, which checks it against the registered schema again.
    children.push({ input, ...overrides });
  }
  return { workflow: { kind: options.workflow.kind, version: options.workflow.version }, onChildFailure: options.onChildFailure ?? "fail", children };
}
