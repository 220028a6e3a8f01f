/**
 * Event-wait steps as an adopter writes them: wait for a named event whose correlation key the
 * step computes from the input and earlier results (`warehouse.confirmed` for order 42), for at
 * most a timeout, and say what a timeout means for the steps after it. The event's payload
 * becomes the step's result. The server keeps the waits and the events (lib/events/room.ts).
 */
import { z } from "zod";
import type { WaitContext } from "@/lib/definitions/context";

/** Event names: lower-case letters, digits, `.`, `_` and `-`, like kinds. */
export const EVENT_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
/** The longest correlation key, in characters. */
export const MAX_EVENT_KEY = 200;
/** The largest payload, as JSON text in UTF-8 bytes: half of what one API request may carry. */
export const MAX_EVENT_PAYLOAD_BYTES = 32 * 1024;
/** How long an event that arrives before its wait begins is kept, unless the steps that wait for it say otherwise: seven days. */
export const DEFAULT_KEEP_EARLY_EVENTS_MS = 7 * 24 * 3_600_000;
const MAX_WAIT_MS = 10 * 366 * 24 * 3_600_000;

/** What a timeout means for the steps after the wait: the request fails, or they run and read that it timed out. */
export type EventTimeoutPolicy = "fail" | "continue";

/** An event wait, as a step declares it. `Payload` is the event's payload as the step reads it. */
export type EventWaitOptions<Ctx = WaitContext, Payload = unknown> = {
  /** The event's name, e.g. `warehouse.confirmed`; an app sends events only by names some registered step waits for. */
  readonly name: string;
  /** The correlation key this request waits for (an order id), from the input and earlier results; at most 200 characters. */
  readonly key: (ctx: Ctx) => string | Promise<string>;
  /** How long to wait, from when the wait begins; none: until the request is cancelled or its deadline passes. */
  readonly timeoutMs?: number | ((ctx: Ctx) => number | Promise<number>);
  /** What a timeout means: `fail` (the default) fails the request; `continue` completes the step with `{ received: false }`. */
  readonly onTimeout?: EventTimeoutPolicy;
  /** The payload's schema: a send whose payload does not match is refused, and the step's result is typed by it. */
  readonly payload?: z.ZodType<Payload>;
  /** Also hand out a one-time URL a third party can POST the payload to (shown to engineers, readable by the app). */
  readonly url?: boolean;
  /** How long an event sent before this wait begins is kept for it. Default seven days. */
  readonly keepEarlyEventsMs?: number;
};

/** The event that settled a wait, as the steps after it read it. */
export type ReceivedEvent<Payload> = {
  readonly received: true;
  readonly payload: Payload;
  readonly eventId: string;
  /** ISO 8601, database clock. */
  readonly receivedAt: string;
};

/** A wait that timed out, as the steps after it read it (only with `onTimeout: "continue"`). */
export type TimedOutWait = { readonly received: false; readonly timedOutAt: string };

/** What an event-wait step's dependants read of it: the event, or (with `onTimeout: "continue"`) that none came in time. */
export type EventResult<Payload, Policy extends EventTimeoutPolicy = "fail"> = Policy extends "continue" ? ReceivedEvent<Payload> | TimedOutWait : ReceivedEvent<Payload>;

/** What an event-wait step registers: the parts the server needs before any request waits (which names exist, their payload schemas). */
export type EventRegistration = {
  readonly room: "event";
  readonly name: string;
  readonly onTimeout: EventTimeoutPolicy;
  readonly url: boolean;
  readonly keepEarlyEventsMs: number;
  /** The payload's JSON Schema, when the step gave one. */
  readonly payloadSchema?: Record<string, unknown>;
};

export const eventRegistrationSchema = z.object({
  room: z.literal("event"),
  name: z.string().regex(EVENT_NAME),
  onTimeout: z.enum(["fail", "continue"]),
  url: z.boolean(),
  keepEarlyEventsMs: z.number().int().min(0).max(MAX_WAIT_MS),
  payloadSchema: z.record(z.string(), z.unknown()).optional(),
});

/** What an event wait's attempt asks its room for. */
export type EventWaitRequest = {
  readonly name: string;
  readonly key: string;
  readonly timeoutMs: number | null;
  readonly onTimeout: EventTimeoutPolicy;
  readonly url: boolean;
};

export const eventWaitRequestSchema = z.object({
  name: z.string().regex(EVENT_NAME, "an event name: lower-case letters, digits, '.', '_' or '-'"),
  key: z.string().min(1).max(MAX_EVENT_KEY),
  timeoutMs: z.number().int().min(0).max(MAX_WAIT_MS).nullable(),
  onTimeout: z.enum(["fail", "continue"]),
  url: z.boolean(),
});

/** The problems of an event wait's options, as `defineWorkflow` reports them; the registration when there are none. */
export function eventRegistrationOf(where: string, options: EventWaitOptions<never, unknown>): { problems: string[]; registration: EventRegistration | null } {
  const problems: string[] = [];
  if (options === null || typeof options !== "object") return { problems: [`${where}: event must be { name, key, … }`], registration: null };
  if (typeof options.name !== "string" || !EVENT_NAME.test(options.name)) {
    problems.push(`${where}: event name must be 1–100 lower-case letters, digits, ".", "_" or "-", got ${JSON.stringify(options.name)}`);
  }
  if (typeof options.key !== "function") problems.push(`${where}: event key must be a function of the step's context`);
  if (typeof options.timeoutMs === "number" && !(Number.isInteger(options.timeoutMs) && options.timeoutMs >= 0 && options.timeoutMs <= MAX_WAIT_MS)) {
    problems.push(`${where}: event timeoutMs must be an integer from 0 to ${MAX_WAIT_MS}, got ${options.timeoutMs}`);
  }
  if (options.onTimeout !== undefined && options.onTimeout !== "fail" && options.onTimeout !== "continue") {
    problems.push(`${where}: event onTimeout must be "fail" or "continue", got ${JSON.stringify(options.onTimeout)}`);
  }
  const keep = options.keepEarlyEventsMs ?? DEFAULT_KEEP_EARLY_EVENTS_MS;
  if (!Number.isInteger(keep) || keep < 0 || keep > MAX_WAIT_MS) problems.push(`${where}: event keepEarlyEventsMs must be an integer from 0 to ${MAX_WAIT_MS}`);
  let payloadSchema: Record<string, unknown> | undefined;
  if (options.payload !== undefined) {
    if (!(options.payload instanceof z.ZodType)) problems.push(`${where}: event payload must be a zod schema`);
    else {
      try {
        payloadSchema = z.toJSONSchema(options.payload, { io: "input", unrepresentable: "throw" }) as Record<string, unknown>;
      } catch (error) {
        problems.push(`${where}: event payload cannot be expressed as JSON Schema, which the server checks sends with: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  if (problems.length > 0) return { problems, registration: null };
  return {
    problems,
    registration: {
      room: "event",
      name: options.name,
      onTimeout: options.onTimeout ?? "fail",
      url: options.url ?? false,
      keepEarlyEventsMs: keep,
      ...(payloadSchema ? { payloadSchema } : {}),
    },
  };
}

/** Works out an event wait's request from its options and the step's context; throws naming what is wrong. */
export async function eventWaitRequestOf(options: EventWaitOptions<WaitContext, unknown>, ctx: WaitContext): Promise<EventWaitRequest> {
  const key = await options.key(ctx);
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_EVENT_KEY) {
    throw new Error(`event key must be a string of 1 to ${MAX_EVENT_KEY} characters, got ${typeof key === "string" ? `${key.length} characters` : typeof key}`);
  }
  const timeoutMs = typeof options.timeoutMs === "function" ? await options.timeoutMs(ctx) : (options.timeoutMs ?? null);
  if (timeoutMs !== null && !(Number.isInteger(timeoutMs) && timeoutMs >= 0 && timeoutMs <= MAX_WAIT_MS)) {
    throw new Error(`event timeoutMs must be an integer from 0 to ${MAX_WAIT_MS}, got ${String(timeoutMs)}`);
  }
  return { name: options.name, key, timeoutMs, onTimeout: options.onTimeout ?? "fail", url: options.url ?? false };
}
