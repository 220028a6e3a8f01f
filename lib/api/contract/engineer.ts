import type { ZodOpenApiPathsObject } from "zod-openapi";

export const engineerPaths: ZodOpenApiPathsObject = {};
