/**
 * Sending an event: an app (with its key), a third party (through a wait's one-time URL) or a test
 * hands Fenceline a named event with its correlation key. It is durable before the answer; a
 * repeated send with the same idempotency key is the same event; it settles the oldest wait for
 * its name and key, or is kept for a wait that begins later (as long as the waiting steps ask).
 */
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Pool } from "pg";
import { digestOf } from "@/lib/engine/digest";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { notifyStepsReady } from "@/lib/engine/waits";
import { InvalidInputError } from "@/lib/engine/errors";
import { ATTRIBUTES, SPAN_NAMES, tracer } from "@/lib/telemetry/spans";
import { contextOfTraceParent, parseTraceParent } from "@/lib/telemetry/trace-context";
import { issuesOf, validatorFor } from "@/lib/requests/json-schema";
import { DEFAULT_KEEP_EARLY_EVENTS_MS } from "./definition";
import { EventKeyReusedError, UnknownEventError, WaitUrlGoneError } from "./errors";
import { consumerOf, deliverEvent, type DeliveredRow } from "./room";
import type { SentEvent } from "./types";
import * as sql from "./sql";

export type SendEventOptions = {
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  /** Who sends: `app:<name>`, `url` for a one-time URL, `test`. Idempotency keys are per sender. */
  readonly sender: string;
  readonly idempotencyKey: string | null;
  /** The W3C traceparent the sender sent; the event's span is its child when no span is active here. */
  readonly traceParent?: string | null;
};

type EventRow = {
  id: string;
  name: string;
  correlation_key: string;
  payload_digest: string;
  received_at: Date;
  keep_until: Date;
  consumed_by_request: string | null;
  consumed_by_step: string | null;
};

/** At most this many waits are tried for one event (each one found cancelled under the lock moves to the next). */
const MAX_WAITS_TRIED = 100;

/**
 * Takes the correlation's lock for (`name`, `key`) in `client`'s transaction, and checks the
 * payload against what the steps that wait for `name` declared; returns the time to keep it early.
 * The transaction's step-ready notification is deferred: the caller sends it once committed.
 */
async function lockAndCheck(client: Queryable, name: string, key: string, payload: unknown): Promise<number> {
  const [registered] = await run<{ known: boolean; keep_ms: string | null; schemas: Record<string, unknown>[] }>(client, sql.lockCorrelationAndReadRegistration, [name, key]);
  if (!registered?.known) throw new UnknownEventError(name);
  const issues = registered.schemas.flatMap((schema) => {
    const validate = validatorFor(`event ${name} ${digestOf(schema)}`, schema);
    // The validator fills defaults in place: check a copy, so what is stored is what was sent.
    return validate(structuredClone(payload)) ? [] : issuesOf(validate.errors, ["payload"]);
  });
  if (issues.length > 0) throw new InvalidInputError(`event ${name}`, issues);
  return registered.keep_ms === null ? DEFAULT_KEEP_EARLY_EVENTS_MS : Number(registered.keep_ms);
}

/**
 * Accepts an event. Throws UnknownEventError when no registered step waits for its name,
 * InvalidInputError when its payload does not match their schema, EventKeyReusedError when the
 * idempotency key already names another event.
 */
export async function sendEvent(pool: Pool, options: SendEventOptions): Promise<SentEvent> {
  const active = context.active();
  const parent = trace.getSpanContext(active) ? active : contextOfTraceParent(options.traceParent);
  const span = tracer.startSpan(SPAN_NAMES.event, { attributes: { [ATTRIBUTES.eventName]: options.name } }, parent);
  try {
    const { sent, consumerTraceParent } = await accept(pool, options);
    // The send deferred it (lockAndCheck): the settled step's dependants may be ready.
    if (sent.consumedBy && !sent.duplicate) await notifyStepsReady(pool);
    if (sent.consumedBy && span.isRecording()) {
      span.setAttributes({ "fenceline.event.consumed_by.request_id": sent.consumedBy.requestId, "fenceline.event.consumed_by.step": sent.consumedBy.step });
      // The waiting request has a trace of its own: the event's span links to it.
      const linked = parseTraceParent(consumerTraceParent);
      if (linked) span.addLink({ context: linked });
    }
    return sent;
  } catch (error) {
    if (span.isRecording()) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A send is three statements between BEGIN and COMMIT: the correlation's lock with the name's
 * registration, the event's record, and its delivery to the oldest wait (one statement: the wait's
 * transition, the event consumed, the step settled); the caller then wakes the workers.
 */
async function accept(pool: Pool, options: SendEventOptions): Promise<{ sent: SentEvent; consumerTraceParent: string | null }> {
  const digest = digestOf(options.payload ?? null);
  return inTransaction(pool, async (client) => {
    const keepMs = await lockAndCheck(client, options.name, options.key, options.payload);
    const [inserted] = await run<{ id: string; received_at: Date; keep_until: Date }>(client, sql.insertEvent, [
      options.name,
      options.key,
      JSON.stringify(options.payload ?? null),
      digest,
      options.sender,
      options.idempotencyKey,
      keepMs,
    ]);
    if (!inserted) return { sent: repeated(await existing(client, options), options, digest), consumerTraceParent: null };
    const consumer = await deliverToOldestWait(client, options.name, options.key, inserted.id);
    const sent: SentEvent = {
      id: inserted.id,
      name: options.name,
      key: options.key,
      receivedAt: inserted.received_at.toISOString(),
      duplicate: false,
      consumedBy: consumer && { requestId: consumer.requestId, step: consumer.step },
      keepUntil: inserted.keep_until.toISOString(),
    };
    return { sent, consumerTraceParent: consumer?.traceParent ?? null };
  });
}

async function existing(client: Queryable, options: SendEventOptions): Promise<EventRow> {
  const [row] = await run<EventRow>(client, sql.eventByIdempotencyKey, [options.sender, options.idempotencyKey]);
  if (!row) throw new Error("sendEvent: an event was neither inserted nor found by its idempotency key");
  return row;
}

function repeated(row: EventRow, options: SendEventOptions, digest: string): SentEvent {
  if (row.name !== options.name || row.correlation_key !== options.key || row.payload_digest !== digest) throw new EventKeyReusedError();
  return {
    id: row.id,
    name: row.name,
    key: row.correlation_key,
    receivedAt: row.received_at.toISOString(),
    duplicate: true,
    consumedBy: row.consumed_by_request === null ? null : { requestId: row.consumed_by_request, step: row.consumed_by_step! },
    keepUntil: row.keep_until.toISOString(),
  };
}

/** Under the correlation's lock: gives the event to the oldest wait for it that still waits. */
async function deliverToOldestWait(client: Queryable, name: string, key: string, eventId: string): Promise<ReturnType<typeof consumerOf> | null> {
  for (let tried = 0; tried < MAX_WAITS_TRIED; tried += 1) {
    const [delivered] = await run<DeliveredRow & { tried_step_id: string; received_step_id: string | null }>(client, sql.deliverToOldestWait, [name, key, eventId]);
    if (!delivered) return null;
    // The oldest wait was cancelled or timed out while the statement waited for its request: the next one.
    if (delivered.received_step_id !== null) return consumerOf(delivered as DeliveredRow);
  }
  return null;
}

/**
 * Settles the wait a one-time URL names with `payload`. Throws WaitUrlGoneError when it was used
 * or its wait ended; the same idempotency key sent again returns the event it first sent.
 */
export async function sendThroughWaitUrl(pool: Pool, token: string, payload: unknown, idempotencyKey: string | null): Promise<SentEvent> {
  const [wait] = await run<{ step_id: string; workflow_id: string; name: string; correlation_key: string; state: string }>(pool, sql.waitByUrlToken, [token]);
  if (!wait) throw new WaitUrlGoneError();
  // Idempotency keys sent through a URL are that wait's own.
  const options: SendEventOptions = { name: wait.name, key: wait.correlation_key, payload, sender: `url:${wait.step_id}`, idempotencyKey };
  const digest = digestOf(payload ?? null);
  if (wait.state !== "waiting") {
    const [sent] = idempotencyKey === null ? [] : await run<EventRow>(pool, sql.eventByIdempotencyKey, [options.sender, idempotencyKey]);
    if (sent) return repeated(sent, options, digest);
    throw new WaitUrlGoneError();
  }
  const sent = await inTransaction(pool, async (client) => {
    const keepMs = await lockAndCheck(client, wait.name, wait.correlation_key, payload);
    await run(client, sql.lockRequest, [wait.workflow_id]);
    const [inserted] = await run<{ id: string; received_at: Date; keep_until: Date }>(client, sql.insertEvent, [
      wait.name,
      wait.correlation_key,
      JSON.stringify(payload ?? null),
      digest,
      options.sender,
      idempotencyKey,
      keepMs,
    ]);
    if (!inserted) return repeated(await existing(client, options), options, digest);
    // Used or ended meanwhile: the transaction takes the event back, and nothing was accepted.
    const consumer = await deliverEvent(client, wait.step_id, inserted.id, token);
    if (!consumer) throw new WaitUrlGoneError();
    return {
      id: inserted.id,
      name: wait.name,
      key: wait.correlation_key,
      receivedAt: inserted.received_at.toISOString(),
      duplicate: false,
      consumedBy: { requestId: consumer.requestId, step: consumer.step },
      keepUntil: inserted.keep_until.toISOString(),
    };
  });
  // Deferred by lockAndCheck, as for any send.
  if (!sent.duplicate) await notifyStepsReady(pool);
  return sent;
}
