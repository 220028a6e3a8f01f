/**
 * Fair share: engineers read keys and destination rates as they stand; admins override a kind's
 * limit per key and fairness rule (audited).
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { FAIRNESS_RULES, KIND_PATTERN, MAX_LIMIT_PER_KEY } from "@/lib/definitions/workflow";
import type { KindFairShare } from "@/lib/fair-share/settings";
import type { FairShareView } from "@/lib/fair-share/view";
import { operation, timestamp } from "../common";

const fairness = z.enum(FAIRNESS_RULES);
const limitPerKey = z.number().int().min(1).max(MAX_LIMIT_PER_KEY).nullable();

export const kindFairShareSchema = z
  .object({
    kind: z.string(),
    declared: z.object({ version: z.number().int(), limitPerKey, fairness, priority: z.number().int() }),
    override: z.object({ limitPerKey, fairness, reason: z.string(), setBy: z.string(), setAt: timestamp }).nullable(),
    effective: z.object({ limitPerKey, fairness }),
  })
  .meta({ id: "KindFairShare", description: "A kind's fair share: as declared, as overridden by an admin, and in force" });
const _sameKind: (settings: KindFairShare) => z.input<typeof kindFairShareSchema> = (settings) => settings;
void _sameKind;

const keyLoadSchema = z.object({
  kind: z.string(),
  key: z.string(),
  ready: z.number().int(),
  queued: z.number().int().meta({ description: "Waiting behind the key's limit on steps in flight" }),
  inFlight: z.number().int(),
  admitted: z.number().int(),
  limitPerKey,
  fairness,
  waitingSince: timestamp.nullable(),
  waitingMs: z.number().nullable(),
});

export const fairShareViewSchema = z
  .object({
    dbNow: timestamp,
    activeKeys: z.number().int(),
    busiest: z.array(keyLoadSchema),
    waitingLongest: z.array(keyLoadSchema),
    destinations: z.array(
      z.object({
        adapter: z.string(),
        perSecond: z.number().int(),
        burst: z.number().int(),
        declaredBy: z.string(),
        callsLastSecond: z.number().int(),
        inFlight: z.number().int(),
        waiting: z.number().int(),
      }),
    ),
    kinds: z.array(kindFairShareSchema),
  })
  .meta({ id: "FairShare" });
export type FairShareViewDto = z.output<typeof fairShareViewSchema>;
const _sameView: (view: FairShareView) => z.input<typeof fairShareViewSchema> = (view) => view;
void _sameView;

/** A kind as defineWorkflow spells it: anything else names no kind (404). */
export const fairShareKindParams = z.object({ kind: z.string().regex(KIND_PATTERN, "a workflow kind") });

const reason = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .regex(/^[^\u0000]*$/, "must not contain NUL characters")
  .meta({ description: "Why: recorded in the audit log" });

export const overrideFairShareBody = z
  .strictObject({
    limitPerKey: limitPerKey.meta({ description: `Steps of one concurrency key in flight at once, 1–${MAX_LIMIT_PER_KEY}; null for no limit` }),
    fairness: fairness.meta({ description: "round-robin: keys take turns; oldest-first: keys do not change the order" }),
    reason,
  })
  .meta({ id: "OverrideFairShareBody" });

export const clearFairShareBody = z.strictObject({ reason }).meta({ id: "ClearFairShareOverrideBody" });

export const fairSharePaths: ZodOpenApiPathsObject = {
  "/api/fair-share": {
    get: operation({
      id: "readFairShare",
      summary: "Concurrency keys (ready, queued behind their limit, in flight; the longest waiting) and destination rates, now (engineer)",
      tag: "engineer",
      ok: { description: "Keys, destinations and each kind's settings", schema: fairShareViewSchema },
    }),
  },
  "/api/admin/fair-share/{kind}": {
    put: operation({
      id: "overrideFairShare",
      summary: "Override a kind's limit per concurrency key and fairness rule (admin; audited)",
      description: "A raised or removed limit admits waiting steps at the next admission pass; a lowered one takes effect as steps end.",
      tag: "admin",
      path: fairShareKindParams,
      body: overrideFairShareBody,
      ok: { description: "The kind's fair share now", schema: kindFairShareSchema },
      problems: { "400": "Invalid body (a limit outside 1–10000, an unknown rule, no reason)", "404": "No registered kind of that name" },
    }),
    delete: operation({
      id: "clearFairShareOverride",
      summary: "Remove an override: the kind's declaration applies again (admin; audited)",
      tag: "admin",
      path: fairShareKindParams,
      body: clearFairShareBody,
      ok: { description: "The kind's fair share now", schema: kindFairShareSchema },
      problems: { "400": "Invalid body (no reason)", "404": "No registered kind of that name" },
    }),
  },
};
