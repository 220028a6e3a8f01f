import { problemSchema } from "../http";

/** An error response in the OpenAPI document: always application/problem+json. */
export const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: problemSchema } },
});
