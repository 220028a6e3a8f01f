import type { ZodOpenApiPathsObject } from "zod-openapi";

export const workerPaths: ZodOpenApiPathsObject = {};
