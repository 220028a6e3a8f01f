/**
 * What waiting steps wait for, as engineers read it (lib/waits/read.ts): a short form for the
 * steps and requests lists, and the full wait with the events received for its key for the step page.
 */
import { z } from "zod";
import { EVENT_WAIT_STATES } from "@/lib/events/vocabulary";
import { TIMER_STATES } from "@/lib/timers/vocabulary";
import { WAITING_FOR } from "@/lib/waits/types";
import { timestamp, uuid } from "../common";

export const waitingForField = z
  .enum(WAITING_FOR)
  .meta({ description: "time: only steps waiting now for a timer; event: for an event; children: for the child requests they started" });

export const waitSummarySchema = z
  .object({
    waitingFor: z.enum(WAITING_FOR),
    since: timestamp.meta({ description: "When the wait began (database clock)" }),
    until: timestamp.nullable().meta({ description: "A timer's due time or an event wait's timeout; null when the event wait never times out, and for children" }),
    event: z.object({ name: z.string(), key: z.string() }).nullable().meta({ description: "The event name and correlation key waited for; null for other waits" }),
    children: z
      .object({ ended: z.number().int().min(0), total: z.number().int().min(1) })
      .nullable()
      .meta({ description: "A wait for children: how many of the child requests have ended, of how many; null for other waits" }),
  })
  .meta({ id: "WaitSummary", description: "What a waiting step waits for, since when and until when" });

export const timerWaitSchema = z.object({
  room: z.literal("timer"),
  state: z.enum(TIMER_STATES),
  dueAt: timestamp,
  requested: z.union([z.object({ afterMs: z.number().int() }), z.object({ at: z.string(), timeZone: z.string().optional() })]),
  armedAt: timestamp,
  settledAt: timestamp.nullable().meta({ description: "When it fired or was cancelled" }),
});

const eventForKeySchema = z.object({
  id: uuid,
  sender: z.string(),
  receivedAt: timestamp,
  keepUntil: timestamp,
  consumedAt: timestamp.nullable(),
  consumedByStepId: uuid.nullable(),
  expired: z.boolean().meta({ description: "Kept past its retention with no wait taking it" }),
});

export const eventWaitSchema = z.object({
  room: z.literal("event"),
  state: z.enum(EVENT_WAIT_STATES),
  name: z.string(),
  key: z.string(),
  timeoutAt: timestamp.nullable(),
  onTimeout: z.enum(["fail", "continue"]),
  url: z.string().nullable().meta({ description: "The one-time URL's path while the wait can still take it, when the step asked for one" }),
  armedAt: timestamp,
  settledAt: timestamp.nullable(),
  eventId: uuid.nullable().meta({ description: "The event that settled it" }),
  events: z.array(eventForKeySchema).meta({ description: "Events received for its name and key, newest first (at most 50)" }),
  moreEvents: z.boolean(),
});

export const stepWaitSchema = z
  .union([timerWaitSchema, eventWaitSchema])
  .meta({ id: "StepWait", description: "What the step waits (or waited) for: a timer, or an event wait with the events received for its key" });
