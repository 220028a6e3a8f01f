/**
 * A workflow's opt-in span attributes (`traceAttributes`), bounded and redacted before they are
 * recorded: a workflow may choose to show an order id on its spans, never by mistake a card
 * number or a token, and never more than a span can carry cheaply.
 */
import type { Attributes } from "@opentelemetry/api";

export const MAX_OPT_IN_ATTRIBUTES = 16;
export const MAX_OPT_IN_VALUE_LENGTH = 128;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** Names that suggest a secret or personal data: their values are never recorded. */
const SECRET = /pass(word|wd)?|secret|token|auth|credential|api[_.-]?key|private|cookie|session|card|cvv|cvc|iban|ssn|^pin$|^key$/i;
export const REDACTED = "[redacted]";
export const OPT_IN_PREFIX = "fenceline.input.";

/** The attributes a workflow's `traceAttributes` asked for, bounded and redacted; none when it throws or returns something else. */
export function optInAttributes(pick: ((input: never) => unknown) | null, input: unknown): Attributes {
  if (pick === null) return {};
  let picked: unknown;
  try {
    picked = (pick as (input: unknown) => unknown)(input);
  } catch {
    return {};
  }
  if (picked === null || typeof picked !== "object" || Array.isArray(picked)) return {};
  const attributes: Attributes = {};
  let count = 0;
  for (const [name, value] of Object.entries(picked)) {
    if (count >= MAX_OPT_IN_ATTRIBUTES) break;
    if (!NAME.test(name)) continue;
    const key = `${OPT_IN_PREFIX}${name}`;
    if (SECRET.test(name)) attributes[key] = REDACTED;
    else if (typeof value === "string") attributes[key] = value.length > MAX_OPT_IN_VALUE_LENGTH ? `${value.slice(0, MAX_OPT_IN_VALUE_LENGTH - 1)}…` : value;
    else if (typeof value === "number" && Number.isFinite(value)) attributes[key] = value;
    else if (typeof value === "boolean") attributes[key] = value;
    else continue;
    count += 1;
  }
  return attributes;
}
