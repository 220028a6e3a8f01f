import { z } from "zod";
import type { ZodOpenApiOperationObject, ZodOpenApiResponsesObject } from "zod-openapi";
import { problemSchema } from "../problems";

export const timestamp = z.iso.datetime({ offset: true });
export const uuid = z.uuid();
/** A fencing term or epoch as the engineer views show it. */
export const term = z.number().int().nonnegative();
/** A query flag: the strings "true" and "false". */
export const booleanFlag = z.enum(["true", "false"]).transform((value) => value === "true");

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

export const jsonBody = (schema: z.ZodType) => ({ content: { "application/json": { schema } } });

export type OperationSpec = {
  readonly id: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly path?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** The answer on success: 200 with a JSON body unless said otherwise. */
  readonly ok: { readonly description: string; readonly schema: z.ZodType; readonly mediaType?: string };
  /** Refusals by status and what each means here; they add to (and may reword) the staff refusals. */
  readonly problems?: Readonly<Record<`${4 | 5}${string}`, string>>;
};

/** One staff operation of the OpenAPI document: its parameters, body, answer and refusals. */
export function operation({ id, summary, description, tag, path, query, body, ok, problems = {} }: OperationSpec): ZodOpenApiOperationObject {
  const refusals: ZodOpenApiResponsesObject = Object.fromEntries(Object.entries(problems).map(([status, meaning]) => [status, problemResponse(meaning)]));
  return {
    operationId: id,
    summary,
    ...(description === undefined ? {} : { description }),
    tags: [tag],
    ...(path || query ? { requestParams: { ...(path ? { path } : {}), ...(query ? { query } : {}) } } : {}),
    ...(body ? { requestBody: jsonBody(body) } : {}),
    responses: {
      ...staffResponses,
      "200": { description: ok.description, content: { [ok.mediaType ?? "application/json"]: { schema: ok.schema } } },
      ...refusals,
    },
  };
}
