/**
 * The OpenAPI document, generated from the same zod schemas the route handlers validate with.
 * Each audience's operations live in lib/api/contract/<audience>.ts; this file only joins them.
 */
import { createDocument } from "zod-openapi";
import { problemSchema } from "./problems";
import { engineerPaths } from "./contract/engineer";
import { publicPaths } from "./contract/public";
import { staffPaths } from "./contract/staff";
import { supportPaths } from "./contract/support";
import { workerPaths } from "./contract/worker";

export function openApiDocument() {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Fenceline API",
      version: "1",
      description:
        "Multi-step requests with durable receipts. Errors are application/problem+json (RFC 9457). " +
        "End users reach a request only through its tracking token.",
    },
    paths: { ...publicPaths, ...staffPaths, ...supportPaths, ...engineerPaths, ...workerPaths },
    components: { schemas: { Problem: problemSchema } },
  });
}
