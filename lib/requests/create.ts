/**
 * Creating a request: of a registered workflow kind (its highest version unless one is named),
 * from an input checked against that version's schema, written with its steps in one statement.
 * An Idempotency-Key makes the call repeatable: the same requester, key and input return the
 * request it first created; the same key with another kind or input is refused, because one key
 * names one intent.
 */
import type { Pool } from "pg";
import { IdempotencyKeyReusedError, UnknownKindError } from "@/lib/engine/errors";
import { findWorkflowDefinition, registeredKinds } from "@/lib/engine/registration";
import { createWorkflow } from "@/lib/engine/workflow";
import { instantiateWorkflow } from "./instantiate";
import { readRequest } from "./read";
import type { RequestRecord } from "./types";

export type CreateRequestOptions = {
  readonly kind: string;
  /** A registered version of the kind; its highest when null. */
  readonly version: number | null;
  readonly input: unknown;
  readonly idempotencyKey: string | null;
  /** Who asks: `app:<name>` for an app key, `api` for anonymous demo requests. */
  readonly requester: string;
  /** Overrides the definition's own deadline. */
  readonly deadlineAt: Date | null;
  /** 1–9, higher claimed first; the kind's default priority when null. A child request passes its parent's. */
  readonly priority?: number | null;
  /** The tenant or customer the request counts against for fair share; none when null. A child request passes its parent's. */
  readonly concurrencyKey?: string | null;
};

export async function createRequest(pool: Pool, options: CreateRequestOptions): Promise<{ created: boolean; request: RequestRecord }> {
  const definition = await findWorkflowDefinition(pool, options.kind, options.version);
  if (!definition) throw new UnknownKindError(options.kind, options.version, await registeredKinds(pool));
  const draft = instantiateWorkflow(definition, options.input, {
    requester: options.requester,
    idempotencyKey: options.idempotencyKey,
    deadlineAt: options.deadlineAt,
    priority: options.priority,
    concurrencyKey: options.concurrencyKey,
  });
  const outcome = await createWorkflow(pool, draft);
  if (!outcome.inputMatches) throw new IdempotencyKeyReusedError();
  const request = await readRequest(pool, outcome.workflowId, null);
  if (!request) throw new Error(`createRequest: workflow ${outcome.workflowId} vanished after it was written`);
  return { created: outcome.created, request };
}
