/**
 * The demo workflow kind `delivery`: one message delivered to a recipient through one of the
 * synthetic destination's contracts, chosen per request. Its steps run in a line:
 *
 *   prepare (pure) → reserve (fenced) → deliver (idempotent | queryable | opaque) → notify (idempotent)
 *
 * Framework-free: `npm run demo:traffic` and the HTTP API build the same draft from the same input.
 */
import { z } from "zod";
import { InvalidWorkflowError } from "@/lib/engine/errors";
import type { StepDraft, WorkflowDraft } from "@/lib/engine/workflow";

export const DELIVERY_KIND = "delivery";

/** The destination contracts a delivery can go through; each recovers differently. */
export const DELIVER_VIA = ["idempotent", "queryable", "opaque"] as const;
export type DeliverVia = (typeof DELIVER_VIA)[number];

const MAX_RECIPIENT_LENGTH = 200;
const MAX_MESSAGE_LENGTH = 2_000;

const requiredString = (issue: { input: unknown }) => (issue.input === undefined ? "required" : "must be a string");

export const deliveryRequestSchema = z.strictObject(
  {
    recipient: z
      .string({ error: requiredString })
      .trim()
      .min(1, "must not be empty")
      .max(MAX_RECIPIENT_LENGTH, `must be at most ${MAX_RECIPIENT_LENGTH} characters`),
    message: z
      .string({ error: requiredString })
      .min(1, "must not be empty")
      .max(MAX_MESSAGE_LENGTH, `must be at most ${MAX_MESSAGE_LENGTH} characters`),
    deliverVia: z
      .enum(DELIVER_VIA, { error: (issue) => `must be one of ${DELIVER_VIA.join(", ")}, got ${JSON.stringify(issue.input)}` })
      .default("idempotent"),
  },
  { error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field ${issue.keys.map((key) => `"${key}"`).join(", ")}` : "must be an object") },
);
export type DeliveryRequest = z.output<typeof deliveryRequestSchema>;

export type RequestIssue = { readonly path: string; readonly message: string };

/** A delivery request that does not match the schema; the message names every offending field. */
export class InvalidDeliveryRequestError extends InvalidWorkflowError {
  constructor(readonly issues: readonly RequestIssue[]) {
    super(`invalid delivery request: ${issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ")}`);
  }
}

export function parseDeliveryRequest(input: unknown): DeliveryRequest {
  const parsed = deliveryRequestSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InvalidDeliveryRequestError(parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
}

export type DeliveryOptions = {
  readonly requester: string;
  readonly idempotencyKey?: string | null;
  readonly deadlineAt?: Date | null;
};

/** Validates the input and builds the workflow draft for `createWorkflow`. */
export function deliveryWorkflow(input: unknown, options: DeliveryOptions): WorkflowDraft {
  const request = parseDeliveryRequest(input);
  const delivery = { recipient: request.recipient, message: request.message };
  // No `resource` for the fenced step: the term is per step, so the resource must be too
  // (the handler then uses the step id). Two steps sharing one would refuse each other's terms.
  const steps: StepDraft[] = [
    { name: "prepare", adapter: "pure", operation: "prepare", stepClass: "pure", input: delivery },
    { name: "reserve", adapter: "fenced", operation: "reserve", stepClass: "external", input: { payload: { recipient: request.recipient } }, dependsOn: ["prepare"] },
    { name: "deliver", adapter: request.deliverVia, operation: "deliver", stepClass: "external", input: { payload: delivery }, dependsOn: ["reserve"] },
    { name: "notify", adapter: "idempotent", operation: "notify", stepClass: "external", input: { payload: { recipient: request.recipient, event: "delivered" } }, dependsOn: ["deliver"] },
  ];
  return {
    kind: DELIVERY_KIND,
    input: request,
    requester: options.requester,
    idempotencyKey: options.idempotencyKey ?? null,
    deadlineAt: options.deadlineAt ?? null,
    steps,
  };
}
