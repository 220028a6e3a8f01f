/**
 * Workflows and their steps. A workflow is one intent; its steps form a DAG, and a step becomes
 * ready only when every step it depends on has a receipt.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { DEFAULT_PRIORITY, MAX_CONCURRENCY_KEY_LENGTH, MAX_PRIORITY, MIN_PRIORITY } from "@/lib/definitions/workflow";
import { inTransaction, run, type Queryable } from "./db";
import { digestOf } from "./digest";
import { InvalidWorkflowError } from "./errors";
import * as sql from "./sql/workflow";

export type StepDraft = {
  readonly name: string;
  readonly adapter: string;
  /** The adapter version the step runs on; "1" when not given. */
  readonly adapterVersion?: string;
  /** What the step does at its adapter; the step's name when not given. */
  readonly operation?: string;
  readonly stepClass: string;
  readonly attemptBudget?: number;
  readonly dependsOn?: readonly string[];
};

export type WorkflowDraft = {
  readonly kind: string;
  /** The definition version the request pins; 1 when not given. */
  readonly version?: number;
  /** The request's input; every step reads it. */
  readonly input: unknown;
  readonly requester: string;
  readonly idempotencyKey?: string | null;
  readonly deadlineAt?: Date | null;
  /** A deadline this long after creation on the database clock, when `deadlineAt` is not given. */
  readonly deadlineMs?: number | null;
  /** 1–9, higher claimed first; DEFAULT_PRIORITY when not given. */
  readonly priority?: number;
  /** The tenant or customer the request counts against for fair share; none when not given. */
  readonly concurrencyKey?: string | null;
  /** The W3C traceparent of the span that created the request; its steps' spans become its children. */
  readonly traceParent?: string | null;
  readonly steps: readonly StepDraft[];
};

export type CreatedWorkflow = {
  readonly workflowId: string;
  readonly trackingToken: string;
  /** False when the idempotency key already named a workflow: this is that workflow. */
  readonly created: boolean;
  /** False when an existing workflow for the key was created from a different input. */
  readonly inputMatches: boolean;
  readonly stepIds: ReadonlyMap<string, string>;
};

const DEFAULT_ATTEMPT_BUDGET = 5;
/** Bound on one workflow's size, so one request cannot exhaust the claim scan. */
export const MAX_STEPS_PER_WORKFLOW = 64;

/** An unguessable tracking token: 192 random bits, URL-safe. */
export const newTrackingToken = (): string => randomBytes(24).toString("base64url");

function validate(draft: WorkflowDraft): void {
  if (draft.steps.length === 0) throw new InvalidWorkflowError("a workflow needs at least one step");
  if (draft.priority !== undefined && (!Number.isInteger(draft.priority) || draft.priority < MIN_PRIORITY || draft.priority > MAX_PRIORITY)) {
    throw new InvalidWorkflowError(`priority must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}, got ${draft.priority}`);
  }
  const key = draft.concurrencyKey;
  if (key !== undefined && key !== null && (typeof key !== "string" || key.length < 1 || key.length > MAX_CONCURRENCY_KEY_LENGTH || /[\u0000-\u001f\u007f]/.test(key))) {
    throw new InvalidWorkflowError(`concurrency key must be 1–${MAX_CONCURRENCY_KEY_LENGTH} characters, none of them control characters`);
  }
  if (draft.steps.length > MAX_STEPS_PER_WORKFLOW) {
    throw new InvalidWorkflowError(`a workflow has at most ${MAX_STEPS_PER_WORKFLOW} steps`);
  }
  const names = new Set<string>();
  for (const step of draft.steps) {
    if (names.has(step.name)) throw new InvalidWorkflowError(`step name "${step.name}" is used twice`);
    names.add(step.name);
    if (step.attemptBudget !== undefined && (!Number.isInteger(step.attemptBudget) || step.attemptBudget < 1)) {
      throw new InvalidWorkflowError(`step "${step.name}": attempt budget must be a positive integer`);
    }
  }
  for (const step of draft.steps) {
    for (const dependency of step.dependsOn ?? []) {
      if (!names.has(dependency)) throw new InvalidWorkflowError(`step "${step.name}" depends on unknown step "${dependency}"`);
    }
  }
  assertAcyclic(draft.steps);
}

function assertAcyclic(steps: readonly StepDraft[]): void {
  const dependsOn = new Map(steps.map((s) => [s.name, s.dependsOn ?? []]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (name: string): void => {
    if (done.has(name)) return;
    if (visiting.has(name)) throw new InvalidWorkflowError(`steps form a cycle through "${name}"`);
    visiting.add(name);
    for (const next of dependsOn.get(name) ?? []) visit(next);
    visiting.delete(name);
    done.add(name);
  };
  for (const step of steps) visit(step.name);
}

/** An idempotency key is one requester's: the same key from two requesters names two intents. */
const keyOf = (requester: string, idempotencyKey: string): string => `${requester}\u0000${idempotencyKey}`;

/**
 * Creates workflows with their steps in one statement. A draft whose requester already used its
 * idempotency key returns the existing workflow instead of creating a second one. `pool` may be a
 * transaction's client: a child step writes its children in the transaction that parks it.
 */
export async function createWorkflows(pool: Queryable, drafts: readonly WorkflowDraft[]): Promise<CreatedWorkflow[]> {
  drafts.forEach(validate);
  const planned = drafts.map((draft) => ({
    draft,
    workflowId: randomUUID(),
    trackingToken: newTrackingToken(),
    inputDigest: digestOf(draft.input),
    stepIds: new Map(draft.steps.map((step) => [step.name, randomUUID()])),
  }));
  const steps = planned.flatMap((w) => w.draft.steps.map((step, position) => ({ w, step, position, id: w.stepIds.get(step.name)! })));
  const edges = steps.flatMap((s) => (s.step.dependsOn ?? []).map((dependency) => [s.id, s.w.stepIds.get(dependency)!] as const));
  const rows = await run<WorkflowRow & { created: boolean }>(pool, sql.createWorkflows, [
    planned.map((p) => p.workflowId),
    planned.map((p) => p.draft.kind),
    planned.map((p) => p.draft.version ?? 1),
    planned.map((p) => JSON.stringify(p.draft.input ?? null)),
    planned.map((p) => p.inputDigest),
    planned.map((p) => p.draft.requester),
    planned.map((p) => p.trackingToken),
    planned.map((p) => p.draft.idempotencyKey ?? null),
    planned.map((p) => p.draft.steps.length),
    planned.map((p) => p.draft.deadlineAt ?? null),
    planned.map((p) => p.draft.deadlineMs ?? null),
    steps.map((s) => s.id),
    steps.map((s) => s.w.workflowId),
    steps.map((s) => s.step.name),
    steps.map((s) => s.position),
    steps.map((s) => s.step.adapter),
    steps.map((s) => s.step.adapterVersion ?? "1"),
    steps.map((s) => s.step.operation ?? s.step.name),
    steps.map((s) => s.step.stepClass),
    steps.map((s) => s.w.inputDigest),
    steps.map((s) => (s.step.dependsOn ?? []).length),
    steps.map((s) => s.step.attemptBudget ?? DEFAULT_ATTEMPT_BUDGET),
    edges.map(([stepId]) => stepId),
    edges.map(([, dependsOn]) => dependsOn),
    planned.map((p) => p.draft.priority ?? DEFAULT_PRIORITY),
    planned.map((p) => p.draft.concurrencyKey ?? null),
    planned.map((p) => p.draft.traceParent ?? null),
  ]);
  const insertedIds = new Set(rows.filter((row) => row.created).map((row) => row.id));
  const existing = new Map<string, WorkflowRow>(rows.filter((row) => !row.created).map((row) => [keyOf(row.requester!, row.idempotency_key!), row]));
  // A key's workflow committed by a concurrent request after the statement began is visible now.
  const unseen = planned.filter((p) => !insertedIds.has(p.workflowId) && !existing.has(keyOf(p.draft.requester, p.draft.idempotencyKey ?? "")));
  for (const [key, row] of await existingFor(pool, unseen)) existing.set(key, row);
  return planned.map((p): CreatedWorkflow => {
    if (insertedIds.has(p.workflowId)) {
      return { workflowId: p.workflowId, trackingToken: p.trackingToken, created: true, inputMatches: true, stepIds: p.stepIds };
    }
    const found = existing.get(keyOf(p.draft.requester, p.draft.idempotencyKey ?? ""));
    if (!found) throw new Error("createWorkflows: a workflow was neither inserted nor found by its key");
    return {
      workflowId: found.id,
      trackingToken: found.tracking_token!,
      created: false,
      inputMatches: found.input_digest === p.inputDigest && found.kind === p.draft.kind && found.version === (p.draft.version ?? 1),
      stepIds: new Map(),
    };
  });
}

export async function createWorkflow(pool: Pool, draft: WorkflowDraft): Promise<CreatedWorkflow> {
  const [created] = await createWorkflows(pool, [draft]);
  return created!;
}

type WorkflowRow = {
  id: string;
  requester: string | null;
  idempotency_key: string | null;
  input_digest: string | null;
  tracking_token: string | null;
  kind: string | null;
  version: number | null;
};

async function existingFor(db: Queryable, duplicates: readonly { draft: WorkflowDraft }[]): Promise<Map<string, WorkflowRow>> {
  if (duplicates.length === 0) return new Map();
  const rows = await run<WorkflowRow>(db, sql.findWorkflowsByIdempotencyKey, [
    duplicates.map((p) => p.draft.requester),
    duplicates.map((p) => p.draft.idempotencyKey),
  ]);
  return new Map(rows.map((row) => [keyOf(row.requester!, row.idempotency_key!), row]));
}

/**
 * Cancels an active workflow and its steps that are not running; running ones see the cancel at
 * their next fenced write. With `seenVersion`, only while the workflow's version
 * (sql.requestVersionOf) is still that one. Returns false when it was not active, or had moved.
 */
export async function cancelWorkflow(pool: Pool, workflowId: string, reason: string, seenVersion: string | null = null): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await run(client, sql.lockWorkflow, [workflowId]);
    const cancelled = await run(client, sql.cancelWorkflow, [workflowId, reason, seenVersion]);
    if (cancelled.length === 0) return false;
    await run(client, sql.cancelIdleSteps, [workflowId, reason]);
    return true;
  });
}
