/**
 * Handlers for the four adapters of the synthetic destination service. Each sends the step's
 * `input.payload` through the worker's effect boundary (ctx.invoke), so identity, permit and
 * checkpoints come first; the fenced one writes to `input.resource`, or to a resource of its own
 * per step. The queryable handler answers a status-query attempt with a query instead of a
 * second create.
 *
 * Step input: `{ payload?: unknown; resource?: string }`. Any operation name is accepted: the
 * operation names what the step does for its workflow (reserve, deliver, notify); the adapter
 * decides how it is done.
 */
import { fencedClient, idempotentClient, opaqueClient, queryableClient, type DestinationResult } from "@/lib/adapters/destinations";
import type { DestinationAnswer, StepContext, StepHandler, StepOutcome } from "../handler";

type DestinationInput = { payload: unknown; resource: string | null };

function readInput(input: unknown): DestinationInput {
  if (input === null || input === undefined) return { payload: null, resource: null };
  if (typeof input !== "object" || Array.isArray(input)) throw new Error("destination step input must be an object");
  const { payload, resource } = input as { payload?: unknown; resource?: unknown };
  if (resource !== undefined && (typeof resource !== "string" || resource.length === 0 || resource.length > 200)) {
    throw new Error("input.resource must be a string of 1 to 200 characters");
  }
  return { payload: payload ?? null, resource: (resource as string | undefined) ?? null };
}

/** The destination marks a replayed answer; the receipt says it was verified by replay. */
function concludeFrom(answer: DestinationAnswer, replayed: boolean): StepOutcome {
  return {
    kind: "effect",
    externalReference: answer.externalReference,
    result: answer.result,
    verification: replayed ? "idempotent_replay" : "direct_response",
  };
}

function answerOf(result: DestinationResult): DestinationAnswer & { replayed: boolean } {
  return { externalReference: result.externalReference, result: result.result, replayed: result.replayed };
}

export function destinationHandlers(baseUrl: string): Map<string, StepHandler> {
  const fenced = fencedClient(baseUrl);
  const idempotent = idempotentClient(baseUrl);
  const queryable = queryableClient(baseUrl);
  const opaque = opaqueClient(baseUrl);

  const effect =
    (send: (context: StepContext, input: DestinationInput, call: Parameters<Parameters<StepContext["invoke"]>[0]>[0]) => Promise<DestinationResult>): StepHandler =>
    async (context) => {
      const input = readInput(context.input);
      let replayed = false;
      const answer = await context.invoke(async (invocation) => {
        const sent = answerOf(await send(context, input, invocation));
        replayed = sent.replayed;
        return sent;
      });
      return concludeFrom(answer, replayed);
    };

  return new Map<string, StepHandler>([
    ["fenced", effect((context, input, call) => fenced.create({ ...call, payload: input.payload, resource: input.resource ?? context.stepId }))],
    ["idempotent", effect((_context, input, call) => idempotent.create({ ...call, payload: input.payload }))],
    ["opaque", effect((_context, input, call) => opaque.create({ ...call, payload: input.payload }))],
    [
      "queryable",
      async (context) => {
        if (context.mode !== "status_query") {
          return effect((_c, input, call) => queryable.create({ ...call, payload: input.payload }))(context);
        }
        const found = await context.query(async ({ requestIdentity, signal, timeoutMs }) => {
          const status = await queryable.query(requestIdentity, signal, timeoutMs);
          return status.status === "applied"
            ? { status: "applied", externalReference: status.externalReference, result: status }
            : { status: "not_found", result: status };
        });
        return { kind: "effect", externalReference: found.externalReference, result: found.result, verification: "status_query" };
      },
    ],
  ]);
}
