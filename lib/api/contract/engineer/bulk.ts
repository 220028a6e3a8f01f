/** Bulk actions on requests: preview what a filter matches, start a cancel or rerun of exactly those, follow it. */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import { BULK_ACTIONS, MAX_BULK_REQUESTS, type BulkPreview, type BulkProgress } from "@/lib/requests/bulk/bulk";
import { operation, timestamp, uuid } from "../common";

export const bulkFilterSchema = z
  .strictObject({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    kind: z.string().trim().min(1).max(100).optional(),
    createdFrom: timestamp.optional().meta({ description: "Created at or after (inclusive)" }),
    createdTo: timestamp.optional().meta({ description: "Created before (exclusive)" }),
    app: z.string().trim().min(1).max(200).optional().meta({ description: "The app (requester) that created them" }),
    reason: z.string().trim().min(1).max(200).optional().meta({ description: "A part of their status reason, case-insensitive (the error they ended with)" }),
  })
  .meta({ id: "BulkFilter", description: "The requests list's filters; every one given must hold" });

const action = z.enum(BULK_ACTIONS).meta({ description: "cancel: each active request; rerun: each failed request, from its first step without a receipt" });

export const bulkPreviewBody = z.strictObject({ action, filter: bulkFilterSchema }).meta({ id: "BulkPreviewBody" });
export const bulkPreviewSchema = z
  .object({
    count: z.number().int().meta({ description: `How many match, counted up to ${MAX_BULK_REQUESTS + 1}` }),
    overLimit: z.boolean().meta({ description: `More than ${MAX_BULK_REQUESTS} match: narrow the filter` }),
    limit: z.number().int(),
    sample: z.array(z.object({ id: uuid, kind: z.string(), status: z.enum(WORKFLOW_STATUSES), statusReason: z.string().nullable(), requester: z.string(), createdAt: timestamp })),
  })
  .meta({ id: "BulkPreview" });
const _previewShape: (p: BulkPreview) => z.input<typeof bulkPreviewSchema> = (p) => p;

export const bulkStartBody = z
  .strictObject({
    action,
    filter: bulkFilterSchema,
    expectedCount: z.number().int().min(1).max(MAX_BULK_REQUESTS).meta({ description: "The preview's count: the action starts only if the filter still matches exactly this many" }),
    reason: z.string().trim().min(3, "say why, in a few words").max(500),
    clientKey: z.string().trim().min(8).max(100).meta({ description: "Any unique string; a retried start with the same key is the same action" }),
  })
  .meta({ id: "BulkStartBody" });
export const bulkParams = z.object({ id: uuid });

export const bulkProgressSchema = z
  .object({
    id: uuid,
    action: z.enum(BULK_ACTIONS),
    filter: bulkFilterSchema,
    reason: z.string(),
    requestedBy: z.string(),
    state: z.enum(["running", "finished"]),
    total: z.number().int(),
    done: z.number().int(),
    skipped: z.number().int(),
    pending: z.number().int(),
    runnerAlive: z.boolean(),
    createdAt: timestamp,
    finishedAt: timestamp.nullable(),
    skippedItems: z.array(z.object({ requestId: uuid, why: z.string() })).meta({ description: "The first 100 skipped, with why" }),
  })
  .meta({ id: "BulkProgress" });
const _progressShape: (p: BulkProgress) => z.input<typeof bulkProgressSchema> = (p) => p;

export const bulkPaths: ZodOpenApiPathsObject = {
  "/api/requests/bulk/preview": {
    post: operation({
      id: "previewBulkRequestAction",
      summary: "How many requests a filter matches, and the first of them",
      tag: "engineer",
      body: bulkPreviewBody,
      ok: { description: "The preview", schema: bulkPreviewSchema },
      problems: { "400": "Invalid body (the problem names the field)" },
    }),
  },
  "/api/requests/bulk": {
    post: operation({
      id: "startBulkRequestAction",
      summary: "Cancel or rerun every request a filter matches, as background work",
      description:
        `Starts only if the filter matches exactly expectedCount requests (at most ${MAX_BULK_REQUESTS}); those are the action's items, whatever matches later. ` +
        "Each request is acted on as from its own page (audited, refused where its state does not allow it: skipped with why). Answers 202 with the progress.",
      tag: "engineer",
      body: bulkStartBody,
      ok: { description: "Started (or the action this clientKey already started)", schema: bulkProgressSchema },
      problems: { "400": "Invalid body (the problem names the field)", "409": "bulk-preview-stale: the filter now matches another number of requests" },
    }),
  },
  "/api/requests/bulk/{id}": {
    get: operation({
      id: "getBulkRequestAction",
      summary: "A bulk action's progress: done, skipped (with why), pending",
      description: "Reading it also carries on an action whose runner stopped (its lease expired).",
      tag: "engineer",
      path: bulkParams,
      ok: { description: "The progress", schema: bulkProgressSchema },
      problems: { "404": "No such bulk action" },
    }),
  },
};
