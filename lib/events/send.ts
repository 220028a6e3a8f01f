/**
 * Sending an event: an app (with its key), a third party (through a wait's one-time URL) or a test
 * hands Fenceline a named event with its correlation key. It is durable before the answer; a
 * repeated send with the same idempotency key is the same event; it settles the oldest wait for
 * its name and key, or is kept for a wait that begins later (as long as the waiting steps ask).
 */
import type { Pool } from "pg";
import { digestOf } from "@/lib/engine/digest";
import { inTransaction, run, type Queryable } from "@/lib/engine/db";
import { InvalidInputError } from "@/lib/engine/errors";
import { issueOf, validatorFor } from "@/lib/requests/json-schema";
import { DEFAULT_KEEP_EARLY_EVENTS_MS } from "./definition";
import { EventKeyReusedError, UnknownEventError, WaitUrlGoneError } from "./errors";
import { deliverEvent } from "./room";
import type { Consumer, SentEvent } from "./types";
import * as sql from "./sql";

export type SendEventOptions = {
  readonly name: string;
  readonly key: string;
  readonly payload: unknown;
  /** Who sends: `app:<name>`, `url` for a one-time URL, `test`. Idempotency keys are per sender. */
  readonly sender: string;
  readonly idempotencyKey: string | null;
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

/** Checks the payload against what the steps that wait for `name` declared; the time to keep it early. */
async function registrationFor(pool: Pool, name: string, payload: unknown): Promise<number> {
  const [registered] = await run<{ keep_ms: string | null; schemas: Record<string, unknown>[] }>(pool, sql.eventNameRegistration, [name]);
  if (!registered) throw new UnknownEventError(name);
  const issues = registered.schemas.flatMap((schema) => {
    const validate = validatorFor(`event ${name} ${digestOf(schema)}`, schema);
    // The validator fills defaults in place: check a copy, so what is stored is what was sent.
    return validate(structuredClone(payload)) ? [] : (validate.errors ?? []).map((error) => issueOf(error, ["payload"]));
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
  const keepMs = await registrationFor(pool, options.name, options.payload);
  const digest = digestOf(options.payload ?? null);
  return inTransaction(pool, async (client) => {
    await run(client, sql.lockCorrelation, [options.name, options.key]);
    const [inserted] = await run<{ id: string; received_at: Date; keep_until: Date }>(client, sql.insertEvent, [
      options.name,
      options.key,
      JSON.stringify(options.payload ?? null),
      digest,
      options.sender,
      options.idempotencyKey,
      keepMs,
    ]);
    if (!inserted) return repeated(await existing(client, options), options, digest);
    const consumedBy = await settleOldestWait(client, options.name, options.key, inserted.id);
    return {
      id: inserted.id,
      name: options.name,
      key: options.key,
      receivedAt: inserted.received_at.toISOString(),
      duplicate: false,
      consumedBy,
      keepUntil: inserted.keep_until.toISOString(),
    };
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
async function settleOldestWait(client: Queryable, name: string, key: string, eventId: string): Promise<Consumer | null> {
  for (let tried = 0; tried < MAX_WAITS_TRIED; tried += 1) {
    const [wait] = await run<{ step_id: string; workflow_id: string }>(client, sql.oldestOpenWait, [name, key]);
    if (!wait) return null;
    await run(client, sql.lockRequest, [wait.workflow_id]);
    const consumer = await deliverEvent(client, wait.step_id, eventId);
    if (consumer) return consumer;
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
  const keepMs = await registrationFor(pool, wait.name, payload);
  return inTransaction(pool, async (client) => {
    await run(client, sql.lockCorrelation, [wait.name, wait.correlation_key]);
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
    const consumedBy = await deliverEvent(client, wait.step_id, inserted.id, token);
    if (!consumedBy) throw new WaitUrlGoneError();
    return {
      id: inserted.id,
      name: wait.name,
      key: wait.correlation_key,
      receivedAt: inserted.received_at.toISOString(),
      duplicate: false,
      consumedBy,
      keepUntil: inserted.keep_until.toISOString(),
    };
  });
}
