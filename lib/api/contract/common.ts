import { problemSchema } from "../problems";

/** An error response in the OpenAPI document: always application/problem+json. */
export const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: problemSchema } },
});

/** The refusals every staff operation can answer (lib/auth/authorize.ts). */
export const staffResponses = {
  "401": problemResponse("Not signed in, or the session expired"),
  "403": problemResponse("Signed in without a role that grants this, or a cross-site request"),
} as const;
