/**
 * Registration: a worker session declares the workflow versions it serves and the adapters their
 * steps use, in the transaction that registers the session. A definition is stored once; the
 * same kind and version (or adapter name and version) presented again must have the same shape,
 * or the registration is refused naming the difference. Several versions of a kind live side by
 * side: a request pins one when it is created, and a worker claims only the versions it serves;
 * their definitions fix which adapters its steps run on.
 */
import { differences, problemsOfRegistration, shapeOfAdapter, type Registration, type RegisteredAdapter, type RegisteredWorkflow } from "@/lib/definitions/registration";
import { pureContract } from "@/lib/adapters/contract";
import type { Fairness } from "@/lib/definitions/workflow";
import { run, type Queryable } from "./db";
import { DefinitionConflictError, InvalidDefinitionError } from "./errors";
import * as sql from "./sql/registration";
import type { WorkflowVersion } from "./types";

type AdapterRow = {
  name: string;
  version: string;
  idempotency_keys: boolean;
  status_query: boolean;
  fence_enforcement: boolean;
  repetition: RegisteredAdapter["repetition"];
  timeout_ms: number;
  concurrency_limit: number;
  rate_per_second: number | null;
  rate_burst: number | null;
};

type WorkflowRow = {
  kind: string;
  version: number;
  input_schema: Record<string, unknown>;
  title: string | null;
  deadline_ms: number | null;
  steps: RegisteredWorkflow["steps"];
  limit_per_key: number | null;
  fairness: Fairness;
  default_priority: number;
};

const registeredOf = (row: WorkflowRow): RegisteredWorkflow => ({
  kind: row.kind,
  version: row.version,
  inputSchema: row.input_schema,
  title: row.title,
  deadlineMs: row.deadline_ms,
  fairShare: { limitPerKey: row.limit_per_key, fairness: row.fairness, priority: row.default_priority },
  steps: row.steps,
});

/**
 * Stores the registration's definitions (new ones only), checks every one already stored has the
 * shape presented, and records that `sessionId` serves its workflows. Run it inside the
 * transaction that registers the session: a refusal leaves no trace. Throws
 * InvalidDefinitionError or DefinitionConflictError.
 */
export async function registerDefinitions(db: Queryable, sessionId: string, registration: Registration): Promise<WorkflowVersion[]> {
  const problems = problemsOfRegistration(registration);
  const classes = [...new Set(registration.workflows.flatMap((workflow) => workflow.steps.flatMap((step) => [step.class, ...(step.compensate ? [step.compensate.class] : [])])))];
  const existing = new Set((await run<{ name: string }>(db, sql.existingStepClasses, [classes])).map((row) => row.name));
  for (const workflow of registration.workflows) {
    for (const step of workflow.steps) {
      if (!existing.has(step.class)) problems.push(`workflow ${workflow.kind}@${workflow.version}: step ${step.name} uses step class "${step.class}", which does not exist`);
      if (step.compensate && !existing.has(step.compensate.class)) {
        problems.push(`workflow ${workflow.kind}@${workflow.version}: step ${step.name}'s compensate uses step class "${step.compensate.class}", which does not exist`);
      }
    }
  }
  if (problems.length > 0) throw new InvalidDefinitionError(problems);

  const { adapters, workflows } = registration;
  await registerAdapters(db, adapters);

  const storedWorkflows = await run<WorkflowRow>(db, sql.registerWorkflows, [
    workflows.map((w) => w.kind),
    workflows.map((w) => w.version),
    workflows.map((w) => JSON.stringify(w.inputSchema)),
    workflows.map((w) => w.title),
    workflows.map((w) => w.deadlineMs),
    workflows.map((w) => JSON.stringify(w.steps)),
    workflows.map((w) => w.fairShare.limitPerKey),
    workflows.map((w) => w.fairShare.fairness),
    workflows.map((w) => w.fairShare.priority),
  ]);
  for (const workflow of workflows) {
    const stored = registeredOf(storedWorkflows.find((row) => row.kind === workflow.kind && row.version === workflow.version)!);
    const differ = differences(stored, workflow);
    if (differ.length > 0) throw new DefinitionConflictError(`workflow ${workflow.kind}@${workflow.version}`, differ);
  }

  await run(db, sql.recordServed, [sessionId, workflows.map((w) => w.kind), workflows.map((w) => w.version)]);
  return workflows.map(({ kind, version }) => ({ kind, version }));
}

/**
 * Stores adapter contracts (new ones only) and checks every one already stored has the shape
 * presented; throws DefinitionConflictError naming the difference.
 */
export async function registerAdapters(db: Queryable, adapters: readonly RegisteredAdapter[]): Promise<void> {
  const storedAdapters = await run<AdapterRow>(db, sql.registerAdapters, [
    adapters.map((a) => a.name),
    adapters.map((a) => a.version),
    adapters.map((a) => a.idempotencyKeys),
    adapters.map((a) => a.statusQuery),
    adapters.map((a) => a.fenceEnforcement),
    adapters.map((a) => a.repetition),
    adapters.map((a) => a.timeoutMs),
    adapters.map((a) => a.concurrencyLimit),
    adapters.map((a) => a.epochAdminUrl),
    adapters.map((a) => a.rate?.perSecond ?? null),
    adapters.map((a) => a.rate?.burst ?? null),
    adapters.map((a) => a.review?.checkUrl ?? null),
    adapters.map((a) => a.review?.instructions ?? null),
  ]);
  for (const adapter of adapters) {
    const row = storedAdapters.find((stored) => stored.name === adapter.name && stored.version === adapter.version)!;
    const stored = {
      name: row.name,
      version: row.version,
      idempotencyKeys: row.idempotency_keys,
      statusQuery: row.status_query,
      fenceEnforcement: row.fence_enforcement,
      repetition: row.repetition,
      timeoutMs: row.timeout_ms,
      concurrencyLimit: row.concurrency_limit,
      rate: row.rate_per_second === null ? null : { perSecond: row.rate_per_second, burst: row.rate_burst! },
    };
    const differ = differences(stored, shapeOfAdapter(adapter));
    if (differ.length > 0) throw new DefinitionConflictError(`adapter ${adapter.name}@${adapter.version}`, differ);
  }
  // Pure steps take no permit: the built-in adapter declares no rate and has none to keep.
  const external = adapters.filter((adapter) => adapter.name !== pureContract.name);
  await run(db, sql.declareRates, [
    external.map((a) => a.name),
    external.map((a) => a.version),
    external.map((a) => a.rate?.perSecond ?? null),
    external.map((a) => a.rate?.burst ?? null),
  ]);
}

/** The workflow versions `sessionId` registered to serve; their definitions fix the adapters. */
export async function servedBySession(db: Queryable, sessionId: string): Promise<WorkflowVersion[]> {
  return run<WorkflowVersion>(db, sql.servedBySession, [sessionId]);
}

/** A registered workflow version, or with `version` null the kind's highest; null when there is none. */
export async function findWorkflowDefinition(db: Queryable, kind: string, version: number | null): Promise<RegisteredWorkflow | null> {
  const [row] = await run<WorkflowRow>(db, sql.workflowDefinition, [kind, version]);
  return row ? registeredOf(row) : null;
}

/** Every registered kind and its versions, lowest first. */
export async function registeredKinds(db: Queryable): Promise<{ kind: string; versions: number[] }[]> {
  return run<{ kind: string; versions: number[] }>(db, sql.registeredKinds, []);
}
