/**
 * The fault protocol of a synthetic destination (`GET/PUT <destination>/admin/faults`), as the
 * fault lab speaks it: a profile for all of the destination's kinds (`global`) and per kind, and
 * the seed every random draw comes from. Which kinds exist is the destination's to say
 * (`GET <destination>/admin/destinations`).
 */
import { z } from "zod";

const probability = z.number().min(0).max(1);
const milliseconds = z.number().int().min(0).max(600_000);

export const faultProfileSchema = z.strictObject({
  /** Added before the request is handled: `fixedMs` plus a uniform draw in [0, jitterMs). */
  latency: z.strictObject({ fixedMs: milliseconds, jitterMs: milliseconds.default(0) }).optional(),
  /** Share of requests answered 500 without any effect. */
  errorRate: probability.optional(),
  /** Share of requests answered 429 with Retry-After, without any effect. */
  rateLimit: z.strictObject({ rate: probability, retryAfterMs: milliseconds }).optional(),
  /** Share of requests whose effect commits and whose connection is then destroyed unanswered. */
  dropResponseRate: probability.optional(),
  /** Share of requests whose effect commits and whose answer is held back for `delayMs`. */
  lateResponse: z.strictObject({ rate: probability, delayMs: milliseconds }).optional(),
});
export type FaultProfile = z.infer<typeof faultProfileSchema>;

export const labFaultSettingsSchema = z.strictObject({
  seed: z.number().int().min(0).max(0xffff_ffff).default(1),
  global: faultProfileSchema.default({}),
  kinds: z.record(z.string().min(1).max(100), faultProfileSchema).default({}),
});
export type LabFaultSettings = z.infer<typeof labFaultSettingsSchema>;
