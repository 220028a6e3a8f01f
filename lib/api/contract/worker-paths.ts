/** The worker protocol's operations as OpenAPI paths, for lib/api/openapi.ts. */
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { problemResponse } from "./common";
import { workerOperations, type Operation } from "./worker";

export const workerPaths: ZodOpenApiPathsObject = Object.fromEntries(
  Object.entries(workerOperations).map(([name, operation]: [string, Operation]) => [
    `/api/worker/${name}`,
    {
      post: {
        operationId: `worker-${name}`,
        tags: ["worker"],
        summary: operation.summary,
        description: "Requires `Authorization: Bearer <worker token>`.",
        security: [{ workerToken: [] }],
        requestBody: { required: true, content: { "application/json": { schema: operation.body } } },
        responses: {
          ...(operation.response
            ? { "200": { description: "Done", content: { "application/json": { schema: operation.response } } } }
            : { "204": { description: "Done" } }),
          "400": problemResponse("The body does not match the schema"),
          "401": problemResponse("Missing or wrong worker token"),
          "403": problemResponse("The session is not a live session registered through this protocol"),
          "404": problemResponse("Not found (code not-found)"),
          "409": problemResponse(
            "Refused by the engine: code authority-lost (with operation, stepId, presentedTerm, reason, currentTerm), checkpoint-out-of-order, " +
              "release-refused, or definition-conflict (a kind and version registered with another shape: subject, differences)",
          ),
          "422": problemResponse("Definitions that cannot be registered: code invalid-definition, with the problems"),
        },
      },
    },
  ]),
);
