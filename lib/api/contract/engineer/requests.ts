/** The engineer's list of requests (workflows), newest first. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { STEP_STATES, WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import { IN_FLIGHT_HEADLINES } from "@/lib/projection/project";
import { cursorField, limitField, pageSchema } from "../../cursor";
import { operation, term, timestamp, uuid } from "../common";
import { waitingForField, waitSummarySchema } from "./waits";

/** Keyset position of a request: its creation time (microseconds, as the database wrote it) and id. */
export const requestCursorKey = z.tuple([z.iso.datetime({ offset: true }), uuid]);

export const listRequestsQuery = z
  .strictObject({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    kind: z.string().trim().min(1).max(100).optional(),
    createdFrom: timestamp.optional().meta({ description: "Created at or after (inclusive)" }),
    createdTo: timestamp.optional().meta({ description: "Created before (exclusive)" }),
    q: z.string().trim().min(1).max(100).optional().meta({ description: "Prefix of the request id or of its tracking token" }),
    progress: z
      .enum(IN_FLIGHT_HEADLINES)
      .optional()
      .meta({ description: "Only active requests whose end user sees this headline on /track (preparing, waiting, recovering, needs_review)" }),
    app: z.string().trim().min(1).max(200).optional().meta({ description: "Only requests this app (requester) created" }),
    reason: z.string().trim().min(1).max(200).optional().meta({ description: "Only requests whose status reason (why it ended) contains this, case-insensitive" }),
    waitingFor: waitingForField.optional().meta({ description: "time: only requests with a step waiting now for a timer; event: for an event; children: for the child requests it started" }),
    cursor: cursorField(requestCursorKey).optional(),
    limit: limitField,
  })
  .meta({ id: "ListRequestsQuery" });
export type ListRequestsQuery = z.output<typeof listRequestsQuery>;

export const requestStepSummarySchema = z.object({
  id: uuid,
  name: z.string(),
  adapter: z.string(),
  state: z.enum(STEP_STATES),
  fencingTerm: term,
});

export const requestSummarySchema = z
  .object({
    id: uuid,
    kind: z.string(),
    version: z.number().int().meta({ description: "The workflow version the request pinned" }),
    servedBy: z.number().int().meta({ description: "Live worker sessions that serve kind@version; 0 means no worker serves it" }),
    status: z.enum(WORKFLOW_STATUSES),
    statusReason: z.string().nullable(),
    requester: z.string(),
    trackingToken: z.string(),
    createdAt: timestamp,
    updatedAt: timestamp,
    deadlineAt: timestamp.nullable(),
    stepsRemaining: z.number().int(),
    openReviews: z.number().int(),
    steps: z.array(requestStepSummarySchema.extend({ wait: waitSummarySchema.nullable().meta({ description: "What the step waits for while it waits; null otherwise" }) })),
  })
  .meta({ id: "RequestSummary" });
export type RequestSummary = z.output<typeof requestSummarySchema>;

export const requestPageSchema = pageSchema(requestSummarySchema).meta({ id: "RequestPage" });
export type RequestPage = z.output<typeof requestPageSchema>;

export const requestsPaths: ZodOpenApiPathsObject = {
  "/api/requests": {
    get: operation({
      id: "listRequests",
      summary: "List requests, newest first",
      description:
        "Keyset pagination on (created_at, id) descending; pass nextCursor back as cursor. For engineers signed in; with an app key " +
        "(`Authorization: Bearer`, scope requests:read) it answers the app's own requests instead, as an AppRequestPage (filters kind, status).",
      tag: "engineer",
      query: listRequestsQuery,
      ok: { description: "A page of requests", schema: requestPageSchema },
      problems: { "400": "Invalid filter or cursor" },
    }),
  },
};
