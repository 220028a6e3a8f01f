import type { ZodOpenApiPathsObject } from "zod-openapi";

export const publicPaths: ZodOpenApiPathsObject = {};
