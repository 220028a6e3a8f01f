/**
 * Creating an end user's request: the demo `delivery` kind, built into a workflow draft and
 * written with its steps in one transaction. An Idempotency-Key makes the call repeatable: the
 * same key with the same input returns the request it first created; the same key with another
 * input is refused, because one key names one intent.
 */
import type { Pool } from "pg";
import { deliveryWorkflow } from "@/lib/demo/workflow";
import { run, type NamedSql } from "@/lib/engine/db";
import { IdempotencyKeyReusedError } from "@/lib/engine/errors";
import { createWorkflow } from "@/lib/engine/workflow";

export type CreatedRequest = {
  readonly id: string;
  readonly trackingToken: string;
  readonly trackUrl: string;
  readonly status: "active" | "completed" | "cancelled" | "failed";
  /** ISO 8601, from the database clock. */
  readonly createdAt: string;
};

export type CreateRequestOptions = {
  readonly input: unknown;
  readonly idempotencyKey: string | null;
  readonly requester: string;
};

/** The status and creation time of workflow $1, as the database recorded them. */
const requestCreatedSql: NamedSql = {
  name: "fl_request_created",
  text: `SELECT status, created_at FROM workflow WHERE id = $1`,
};

export const trackUrlOf = (trackingToken: string): string => `/track/${trackingToken}`;

export async function createRequest(pool: Pool, { input, idempotencyKey, requester }: CreateRequestOptions): Promise<{ created: boolean; request: CreatedRequest }> {
  const outcome = await createWorkflow(pool, deliveryWorkflow(input, { requester, idempotencyKey }));
  if (!outcome.inputMatches) throw new IdempotencyKeyReusedError();
  const [row] = await run<{ status: CreatedRequest["status"]; created_at: Date }>(pool, requestCreatedSql, [outcome.workflowId]);
  if (!row) throw new Error(`createRequest: workflow ${outcome.workflowId} vanished after it was written`);
  return {
    created: outcome.created,
    request: {
      id: outcome.workflowId,
      trackingToken: outcome.trackingToken,
      trackUrl: trackUrlOf(outcome.trackingToken),
      status: row.status,
      createdAt: row.created_at.toISOString(),
    },
  };
}
