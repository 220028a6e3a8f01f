/**
 * The children room: a parent step that starts child requests and waits for them to end.
 *
 *   parked ──arm──▶ waiting ──every child ended──▶ ended      (a receipt: the children's results)
 *                          └─a child failed, `fail`─▶ failed  (the step fails, and its request)
 *                          └─its step ended otherwise▶ cancelled (with its unfinished children)
 *
 * Arming runs in the parking transaction, which holds the parent request's row: it checks that
 * the child's workflow is registered and each child's input against its schema (refusing, naming
 * `children[i]…`, with nothing written), then writes the children as requests of the parent's app
 * with the parent's priority and concurrency key (unless the step overrode them), and one link per
 * child whose primary key is (parent step, index). A child's request identity is
 * `fenceline.child:<parent step>:<index>`, unique per app as every idempotency key is: so a park
 * applied whose answer was lost, a SIGKILLed worker or a recovery by another worker never writes a
 * second child for an index: a second attempt to would fail the whole transaction.
 *
 * The end of a child reaches its wait by the trigger `child_ends_to_its_parent` (any path that
 * ends a request), which makes the wait due when the last child ends and notifies DUE_NOW_CHANNEL
 * in that transaction; the keepers, woken by it, settle the parent step here (docs/decisions/030).
 * The core does not know this room by name.
 */
import type { PoolClient } from "pg";
import { inTransaction, run } from "@/lib/engine/db";
import { InvalidInputError, InvalidWaitError } from "@/lib/engine/errors";
import { findWorkflowDefinition, registeredKinds } from "@/lib/engine/registration";
import { assertAllSettled, failWaitingSteps, settleWaitingSteps, type WaitRoom } from "@/lib/engine/waits";
import { createWorkflows } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "@/lib/requests/instantiate";
import { childrenRequestSchema, type ChildrenRequest } from "./definition";
import * as sql from "./sql";

/** A child's idempotency key: derived from its parent step and its index, so it names one child forever. */
export const childIdempotencyKey = (parentStepId: string, index: number): string => `fenceline.child:${parentStepId}:${index}`;

type OutcomeRow = {
  parent_step_id: string;
  index: number;
  request_id: string;
  kind: string;
  version: number;
  status: "completed" | "failed" | "cancelled" | "active";
  status_reason: string | null;
  results: Record<string, unknown>;
};

/** Writes the children of a parked step; throws InvalidWaitError naming the field when one cannot be. */
async function writeChildren(client: PoolClient, step: { stepId: string; workflowId: string }, asked: ChildrenRequest): Promise<string[]> {
  const definition = await findWorkflowDefinition(client, asked.workflow.kind, asked.workflow.version);
  if (!definition) {
    const known = (await registeredKinds(client)).map((k) => `${k.kind}@${k.versions.join(",")}`).join("; ") || "none";
    throw new InvalidWaitError(
      `children.workflow: no worker has registered ${asked.workflow.kind}@${asked.workflow.version}, so no child of it could run (registered: ${known}); start a worker that serves it`,
    );
  }
  const [parent] = await run<{ requester: string; priority: number; concurrency_key: string | null }>(client, sql.parentOfParkedStep, [step.workflowId]);
  const drafts = asked.children.map((child, index) => {
    try {
      return instantiateWorkflow(definition, child.input, {
        requester: parent!.requester,
        idempotencyKey: childIdempotencyKey(step.stepId, index),
        deadlineAt: null,
        priority: child.priority ?? parent!.priority,
        concurrencyKey: child.concurrencyKey === undefined ? parent!.concurrency_key : child.concurrencyKey,
      });
    } catch (error) {
      if (error instanceof InvalidInputError) {
        throw new InvalidWaitError(`children[${index}].input: ${error.issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ")}`);
      }
      throw error;
    }
  });
  const created = await createWorkflows(client, drafts);
  // A child that already existed for its (step, index) is the guard at work: the link below would
  // fail on its primary key anyway; say so plainly instead.
  const existing = created.findIndex((child) => !child.created);
  if (existing >= 0) throw new Error(`children room: step ${step.stepId} already started its child ${existing}; a second start was refused`);
  return created.map((child) => child.workflowId);
}

export const childrenRoom: WaitRoom = {
  name: "children",
  record: { table: "child_wait", waitingFor: "children" },
  request: childrenRequestSchema,
  async arm(client, step, request) {
    const asked = request as ChildrenRequest;
    const childIds = await writeChildren(client, step, asked);
    await run(client, sql.armChildWait, [step.stepId, step.workflowId, asked.onChildFailure, childIds.length]);
    await run(client, sql.linkChildren, [step.stepId, step.workflowId, childIds]);
    return { room: "children", settled: false, dueAt: null, detail: { children: childIds.length, workflow: `${asked.workflow.kind}@${asked.workflow.version}` } };
  },
  async settleDue(pool, limit) {
    return inTransaction(pool, async (client) => {
      const due = await run<{ step_id: string; state: "ended" | "failed"; children_total: number }>(client, sql.takeDueChildWaits, [limit]);
      if (due.length === 0) return 0;
      const outcomes = await run<OutcomeRow>(client, sql.childOutcomes, [due.map((wait) => wait.step_id)]);
      const byStep = new Map<string, OutcomeRow[]>();
      for (const row of outcomes) byStep.set(row.parent_step_id, [...(byStep.get(row.parent_step_id) ?? []), row]);
      const ended = due.filter((wait) => wait.state === "ended");
      const failing = due.filter((wait) => wait.state === "failed");
      const completed = await settleWaitingSteps(
        client,
        ended.map((wait) => {
          const children = byStep.get(wait.step_id) ?? [];
          return {
            stepId: wait.step_id,
            result: {
              children: children.map((child) =>
                child.status === "completed"
                  ? { index: child.index, requestId: child.request_id, status: "completed", results: child.results }
                  : { index: child.index, requestId: child.request_id, status: child.status, reason: child.status_reason },
              ),
              completed: children.filter((child) => child.status === "completed").length,
              failed: children.filter((child) => child.status !== "completed").length,
            },
            verification: "children_ended" as const,
            externalReference: null,
          };
        }),
      );
      const failed = await failWaitingSteps(
        client,
        failing.map((wait) => {
          const children = byStep.get(wait.step_id) ?? [];
          const first = children.find((child) => child.status !== "completed" && child.status !== "active");
          const which = first ? `child ${first.index + 1} of ${wait.children_total} (${first.kind}@${first.version}, request ${first.request_id})` : "a child";
          return { stepId: wait.step_id, reason: `${which} ${first?.status === "cancelled" ? "was cancelled" : "could not be completed"}${first?.status_reason ? `: ${first.status_reason}` : ""}` };
        }),
      );
      assertAllSettled("children", due.map((wait) => wait.step_id), new Set([...completed, ...failed]));
      return due.length;
    });
  },
  async nextDueInMs(db) {
    const [row] = await run<{ in_ms: number | null }>(db, sql.nextChildWaitDue, []);
    return row?.in_ms ?? null;
  },
};
