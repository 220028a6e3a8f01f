import type { ZodOpenApiPathsObject } from "zod-openapi";

export const supportPaths: ZodOpenApiPathsObject = {};
