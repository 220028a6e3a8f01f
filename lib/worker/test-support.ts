/**
 * Workflows and workers for tests of the runtime against a real database: a one-step workflow
 * with the handler and step class a test needs, its requests written as the API would write
 * them, and workers that stop when the test ends. Used by *.db.test.ts only.
 */
import type { Pool } from "pg";
import { onTestFinished } from "vitest";
import { z } from "zod";
import { defineAdapter, type AdapterDefinition, type AdapterOptions } from "@/lib/definitions/adapter";
import type { StepContext } from "@/lib/definitions/context";
import { done, type StepOutcome } from "@/lib/definitions/outcome";
import { registeredWorkflow, registrationOf } from "@/lib/definitions/registration";
import { defineWorkflow, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { testKindOf } from "@/lib/engine/test-support";
import { createWorkflows } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { directCoordinator } from "./direct-coordinator";
import { Worker, type WorkerOptions } from "./worker";

const MILESTONE = { upcoming: "Step", current: "Working on it", done: "Done" } as const;

export type SingleStepOptions = {
  readonly kind: string;
  readonly version?: number;
  readonly adapter?: AdapterDefinition<unknown>;
  /** Default: `pure` without an adapter, `external` with one. */
  readonly class?: string;
  readonly attemptBudget?: number;
  readonly run?: (ctx: StepContext<unknown, unknown>) => Promise<StepOutcome>;
};

/** A workflow of one step named `only`, on any input. */
export function singleStep(options: SingleStepOptions): WorkflowDefinition {
  return defineWorkflow({
    kind: options.kind,
    version: options.version ?? 1,
    input: z.unknown(),
    steps: {
      only: { adapter: options.adapter, class: options.class, attemptBudget: options.attemptBudget, milestone: MILESTONE, run: options.run },
    },
  }) as WorkflowDefinition;
}

/** An adapter for tests: an idempotent destination unless `contract` says otherwise. */
export function testAdapter(name: string, options: Partial<AdapterOptions<unknown>> & Pick<AdapterOptions<unknown>, "invoke">): AdapterDefinition<unknown> {
  return defineAdapter<unknown>({
    name,
    version: "1",
    contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
    timeoutMs: 5_000,
    concurrencyLimit: 10,
    ...options,
  });
}

/**
 * Writes one request of `workflow` per input, as the API would (without registering the
 * workflow: the worker that serves it does that); returns each request's id and step ids.
 */
export async function createRequestsOf(
  pool: Pool,
  workflow: WorkflowDefinition,
  inputs: readonly unknown[],
  options: { readonly deadlineAt?: Date | null; readonly concurrencyKey?: (index: number) => string | null } = {},
): Promise<{ workflowId: string; stepIds: ReadonlyMap<string, string> }[]> {
  const registered = registeredWorkflow(workflow);
  const created = await createWorkflows(
    pool,
    inputs.map((input, index) =>
      instantiateWorkflow(registered, input, {
        requester: "test",
        idempotencyKey: null,
        deadlineAt: options.deadlineAt ?? null,
        concurrencyKey: options.concurrencyKey?.(index) ?? null,
      }),
    ),
  );
  return created.map((request) => ({ workflowId: request.workflowId, stepIds: request.stepIds }));
}

/** The id of the `only` step of a fresh request of a one-step workflow. */
export async function oneRequest(pool: Pool, workflow: WorkflowDefinition, input: unknown = {}, options: { readonly deadlineAt?: Date | null } = {}): Promise<string> {
  const [request] = await createRequestsOf(pool, workflow, [input], options);
  return request!.stepIds.get("only")!;
}

/** A direct-transport worker with short waits, quiet, stopped when the test ends. */
export function testWorker(pool: Pool, workflows: readonly WorkflowDefinition[], options: Partial<WorkerOptions> = {}): Worker {
  const worker = new Worker({
    coordinator: directCoordinator(pool),
    workflows,
    pollIntervalMs: 100,
    recoveryIntervalMs: 100,
    shutdownTimeoutMs: 2_000,
    log: () => undefined,
    ...options,
  });
  // Stopped however the test ends: a failed expectation must not leave a worker claiming on a
  // database the fixture is about to drop, which would hold the test file open for ever.
  onTestFinished(() => worker.stop());
  return worker;
}

/**
 * The one-step pure workflow of the engine's test steps on the `pure` adapter
 * (createSingleStepWorkflows), and its registration: what a worker serving them registers.
 */
export const testPureWorkflow = singleStep({ kind: testKindOf("pure"), run: async () => done() });
export const TEST_PURE_REGISTRATION = registrationOf([testPureWorkflow]);
