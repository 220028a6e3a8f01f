/**
 * The synthetic destination service: one HTTP server on loopback offering one destination per
 * adapter contract, with its own durable state (sql.ts), run-time faults (faults.ts) and an audit
 * of every effect it applied.
 *
 *   POST /fenced/:resource            Fenceline-Epoch, Fenceline-Term, Fenceline-Request-Identity
 *   POST /idempotent                  Idempotency-Key
 *   POST /queryable                   Fenceline-Client-Reference
 *   GET  /queryable/status/:reference
 *   POST /opaque                      (Fenceline-Request-Identity, recorded for the audit only)
 *   GET  /admin/faults, PUT /admin/faults (faults.ts), GET /admin/destinations (its kinds)
 *   GET  /admin/epoch, PUT /admin/epoch  (the installed epoch: fenced writes from older ones are refused)
 *   POST /admin/epoch/probe  { epoch } → { rejected }: a real fenced write under the epoch before
 *        `epoch` with the largest term, to a resource no step uses; rejected when it was refused
 *   GET  /admin/audit
 *
 * The request body is the effect's payload (JSON, may be empty). An answer is the stored result,
 * `{ externalReference, destination, ... }`; a replay carries `Fenceline-Replayed: true`.
 * Refusals are application/problem+json.
 */
import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { openPool, query } from "./db";
import { FaultInjector, faultSettingsSchema, noFaults, type FaultSettings } from "./faults";
import {
  bindingFor,
  createSchema,
  duplicateEffects,
  effectCounts,
  epochState,
  fencedState,
  fencedWrite,
  installEpoch,
  fenceRegressions,
  idempotentWrite,
  incidentCounts,
  recordIncident,
  plainWrite,
  queryableStatus,
  readFaultSettings,
  writeFaultSettings,
  DESTINATION_KINDS,
  type DestinationKind,
} from "./sql";

export interface DestinationServiceOptions {
  databaseUrl: string;
  /** 0 picks a free port. */
  port: number;
}

export interface DestinationService {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  url: string;
  /** The service's own pool, for `readAudit` in an in-process checker. */
  pool: pg.Pool;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1_048_576;
/** PostgreSQL bigint: epochs and terms beyond it cannot be stored, so they are refused. */
const MAX_BIGINT = 9_223_372_036_854_775_807n;
const PREFIX: Record<DestinationKind, string> = { fenced: "fen", idempotent: "idm", queryable: "qry", opaque: "opq" };

type Reply = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
};

/** A refusal decided before any effect, thrown where it is found; `reply` is its problem+json answer. */
class Refused extends Error {
  constructor(readonly reply: Reply, message: string) {
    super(message);
  }
}

function refused(status: number, title: string, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Refused {
  return new Refused({
    status,
    body: { type: `urn:fenceline:destination:${title.replaceAll(" ", "-")}`, title, status, detail, ...extra },
    headers: { "content-type": "application/problem+json", ...headers },
  }, `${status} ${title}: ${detail}`);
}

/**
 * sha256 of the payload as JSON with sorted keys, so equal payloads have equal digests whatever
 * their key order. Every effect row keeps its request body's digest (`payload_digest`), so an
 * auditor can tell which body an effect came from.
 */
export function digestOf(payload: unknown): string {
  const canonical = JSON.stringify(payload ?? null, (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return "sha256:" + createHash("sha256").update(canonical).digest("hex");
}

/** What an effect route did: applied now, or replayed an earlier result. */
type Effect = { result: unknown; replayed: boolean };

export async function startDestinationService({ databaseUrl, port }: DestinationServiceOptions): Promise<DestinationService> {
  const pool = openPool(databaseUrl);
  try {
    await pool.query(createSchema);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const [stored] = await query<{ settings: unknown }>(pool, readFaultSettings, []);
  const faults = new FaultInjector(stored ? faultSettingsSchema.parse(stored.settings) : noFaults);
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();

  const server = http.createServer((request, response) => {
    const handled = handle(request, response).finally(() => inFlight.delete(handled));
    inFlight.add(handled);
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    try {
      const reply = await route(request, response);
      if (reply) send(response, reply);
    } catch (error) {
      if (stopping.signal.aborted) {
        response.destroy();
        return;
      }
      send(response, error instanceof Refused ? error.reply : refused(500, "internal error", String(error)).reply);
    }
  }

  /** Answers null when the fault plan already dealt with the connection. */
  async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<Reply | null> {
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    const method = request.method ?? "GET";
    const segments = path.split("/").filter(Boolean).map(decodeURIComponent);

    if (path === "/admin/faults") {
      if (method === "GET") return { status: 200, body: faults.settings };
      if (method === "PUT") return { status: 200, body: await putFaults(await readJson(request)) };
      throw notAllowed(method, path);
    }
    if (path === "/admin/destinations") {
      if (method === "GET") return { status: 200, body: { destinations: DESTINATION_KINDS } };
      throw notAllowed(method, path);
    }
    if (path === "/admin/epoch/probe") {
      if (method === "POST") return { status: 200, body: await probeEpoch(await readJson(request)) };
      throw notAllowed(method, path);
    }
    if (path === "/admin/epoch") {
      if (method === "GET") return { status: 200, body: await readEpoch() };
      if (method === "PUT") return { status: 200, body: await putEpoch(await readJson(request)) };
      throw notAllowed(method, path);
    }
    if (path === "/admin/audit") {
      if (method === "GET") return { status: 200, body: await readAudit(pool) };
      throw notAllowed(method, path);
    }
    if (segments[0] === "queryable" && segments[1] === "status" && segments.length === 3) {
      if (method !== "GET") throw notAllowed(method, path);
      return { status: 200, body: await statusOf(segments[2]!) };
    }

    const kind = DESTINATION_KINDS.find((candidate) => candidate === segments[0]);
    const resource = segments[1];
    if (!kind || segments.length !== (kind === "fenced" ? 2 : 1)) throw refused(404, "not found", `no route ${path}`);
    if (method !== "POST") throw notAllowed(method, path);

    const payload = await readJson(request);
    const apply = effectFor(kind, request, payload, resource ?? "");
    const plan = faults.plan(kind);
    if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal: stopping.signal });
    if (plan.refuse?.status === 429) {
      const seconds = Math.ceil(plan.refuse.retryAfterMs / 1000);
      throw refused(429, "rate limited", `retry after ${plan.refuse.retryAfterMs} ms`, { retryAfterMs: plan.refuse.retryAfterMs }, { "retry-after": String(seconds) });
    }
    if (plan.refuse?.status === 500) throw refused(500, "injected error", "fault injection: failed before any effect");

    const effect = await apply();
    const firstAnswerLost = !effect.replayed && faults.dropsFirstAnswer(kind, digestOf(payload));
    if ((plan.after && "drop" in plan.after) || firstAnswerLost) {
      // The effect is committed; the caller never learns it.
      const identity = optionalHeader(request, kind === "idempotent" ? "idempotency-key" : kind === "queryable" ? "fenceline-client-reference" : "fenceline-request-identity");
      await query(pool, recordIncident, [kind, "dropped_response", resource ?? null, identity, null, null]).catch(() => undefined);
      response.socket?.destroy();
      return null;
    }
    if (plan.after) await sleep(plan.after.lateMs, undefined, { signal: stopping.signal });
    return { status: 200, body: effect.result, headers: effect.replayed ? { "fenceline-replayed": "true" } : {} };
  }

  /** Validates the request fully before any fault is drawn, and returns the write to run. */
  function effectFor(kind: DestinationKind, request: http.IncomingMessage, payload: unknown, resource: string): () => Promise<Effect> {
    const payloadDigest = digestOf(payload);
    const externalReference = `${PREFIX[kind]}_${randomUUID().replaceAll("-", "")}`;
    switch (kind) {
      case "fenced": {
        const epoch = bigintHeader(request, "fenceline-epoch");
        const term = bigintHeader(request, "fenceline-term");
        const identity = requiredHeader(request, "fenceline-request-identity");
        const result = { externalReference, destination: kind, resource, epoch: String(epoch), term: String(term) };
        return () => writeFenced(resource, epoch, term, identity, payloadDigest, externalReference, result);
      }
      case "idempotent": {
        const key = requiredHeader(request, "idempotency-key");
        const result = { externalReference, destination: kind, idempotencyKey: key };
        return () => writeIdempotent(key, payloadDigest, externalReference, result);
      }
      case "queryable": {
        const reference = requiredHeader(request, "fenceline-client-reference");
        const result = { externalReference, destination: kind, clientReference: reference };
        return () => writePlain(kind, reference, payloadDigest, externalReference, result);
      }
      case "opaque": {
        const identity = optionalHeader(request, "fenceline-request-identity");
        const result = { externalReference, destination: kind };
        return () => writePlain(kind, identity, payloadDigest, externalReference, result);
      }
    }
  }

  async function writeFenced(
    resource: string,
    epoch: bigint,
    term: bigint,
    identity: string,
    payloadDigest: string,
    externalReference: string,
    result: unknown,
  ): Promise<Effect> {
    const values = [resource, String(epoch), String(term), identity, payloadDigest, externalReference, result];
    const [written] = await query<{ advanced: boolean; applied: string | null }>(pool, fencedWrite, values);
    if (written?.applied) return { result, replayed: false };
    // Read after the write: the fence row and binding it waited on have committed by now.
    const [state] = await query<{
      epoch: string | null;
      term: string | null;
      external_reference: string | null;
      result: unknown;
      payload_digest: string | null;
      installed_epoch: string;
    }>(pool, fencedState, [resource, identity]);
    if (!written?.advanced) {
      // For the audit only: a failure to record it must not change the answer.
      await query(pool, recordIncident, ["fenced", "stale_term", resource, identity, String(epoch), String(term)]).catch(() => undefined);
      const detail =
        state && epoch < BigInt(state.installed_epoch)
          ? `epoch ${epoch} is older than the installed epoch ${state.installed_epoch}`
          : `term (${epoch}, ${term}) is not newer than the accepted (${state?.epoch}, ${state?.term}) for ${resource}`;
      throw refused(409, "stale term", detail, {
        resource,
        currentEpoch: state?.epoch ?? null,
        currentTerm: state?.term ?? null,
      });
    }
    if (!state?.external_reference) throw refused(500, "internal error", `request ${identity} yielded to a binding that is gone`);
    if (state.payload_digest !== payloadDigest) throw payloadMismatch("request identity", identity);
    return { result: state.result, replayed: true };
  }

  async function writeIdempotent(key: string, payloadDigest: string, externalReference: string, result: unknown): Promise<Effect> {
    const [written] = await query<{ applied: string | null }>(pool, idempotentWrite, [key, payloadDigest, externalReference, result]);
    if (written?.applied) return { result, replayed: false };
    const [bound] = await query<{ result: unknown; payload_digest: string }>(pool, bindingFor, ["idempotent", "", key]);
    if (!bound) throw refused(500, "internal error", `idempotency key ${key} yielded to a binding that is gone`);
    if (bound.payload_digest !== payloadDigest) throw payloadMismatch("idempotency key", key);
    return { result: bound.result, replayed: true };
  }

  async function writePlain(kind: DestinationKind, identity: string | null, payloadDigest: string, externalReference: string, result: unknown): Promise<Effect> {
    await query(pool, plainWrite, [kind, identity, payloadDigest, externalReference, result]);
    return { result, replayed: false };
  }

  async function statusOf(reference: string): Promise<unknown> {
    const rows = await query<{ external_reference: string; applied_at: Date }>(pool, queryableStatus, [reference]);
    const [first] = rows;
    if (!first) return { status: "not_found", clientReference: reference };
    // A repeated create applied twice: the first effect answers, the count shows the duplicates.
    return { status: "applied", clientReference: reference, externalReference: first.external_reference, appliedAt: first.applied_at, applications: rows.length };
  }

  async function readEpoch(): Promise<{ installed: string; highestSeen: string }> {
    const [row] = await query<{ installed: string; highest_seen: string }>(pool, epochState, []);
    return { installed: row!.installed, highestSeen: row!.highest_seen };
  }

  /** Installs an epoch (never moves backwards) and answers the state after it. */
  async function putEpoch(body: unknown): Promise<{ installed: string; highestSeen: string }> {
    await query(pool, installEpoch, [epochIn(body)]);
    return readEpoch();
  }

  /** Proves a write from before `epoch` is refused: it tries one, with the largest term there is. */
  async function probeEpoch(body: unknown): Promise<{ rejected: boolean }> {
    const epoch = BigInt(epochIn(body));
    const identity = `epoch-probe-${epoch}`;
    try {
      await writeFenced(EPOCH_PROBE_RESOURCE, epoch - 1n, MAX_BIGINT, identity, digestOf({ probe: true }), `fen_probe_${epoch}`, { probe: true });
      return { rejected: false };
    } catch (error) {
      if (error instanceof Refused && error.reply.status === 409) return { rejected: true };
      throw error;
    }
  }

  async function putFaults(body: unknown): Promise<FaultSettings> {
    const parsed = faultSettingsSchema.safeParse(body);
    if (!parsed.success) {
      throw refused(400, "invalid fault settings", "the fault settings do not match the schema", {
        issues: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
      });
    }
    await query(pool, writeFaultSettings, [parsed.data]);
    faults.replace(parsed.data);
    return parsed.data;
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${bound}`,
    pool,
    close: async () => {
      stopping.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.allSettled([...inFlight]);
      await closed;
      await pool.end();
    },
  };
}

export type DestinationAudit = {
  effects: Record<DestinationKind, number>;
  total: number;
  /** A request identity (fenced identity, idempotency key, client reference) applied more than once. */
  duplicates: { kind: DestinationKind; resource: string | null; requestIdentity: string; effects: number; externalReferences: string[] }[];
  /** Fenced effects accepted under a term not newer than the previous one at the same resource. */
  fenceRegressions: { resource: string; epoch: string; term: string; previousEpoch: string; previousTerm: string; externalReference: string }[];
  /** Fenced writes refused because their (epoch, term) was not newer than the resource's (409). */
  staleTermRejections: number;
  /** Effects that committed and whose response was then dropped by fault injection. */
  droppedResponses: number;
};

/** The effect audit, for a checker in the same process (GET /admin/audit serves the same). */
export async function readAudit(pool: pg.Pool): Promise<DestinationAudit> {
  const [counts, duplicates, regressions, incidents] = await Promise.all([
    query<{ kind: DestinationKind; effects: number }>(pool, effectCounts, []),
    query<{ kind: DestinationKind; resource: string | null; request_identity: string; effects: number; external_references: string[] }>(pool, duplicateEffects, []),
    query<{ resource: string; epoch: string; term: string; previous_epoch: string; previous_term: string; external_reference: string }>(pool, fenceRegressions, []),
    query<{ what: "stale_term" | "dropped_response"; n: number }>(pool, incidentCounts, []),
  ]);
  const incidentsOf = (what: string) => incidents.find((row) => row.what === what)?.n ?? 0;
  const effects: Record<DestinationKind, number> = { fenced: 0, idempotent: 0, queryable: 0, opaque: 0 };
  for (const row of counts) effects[row.kind] = row.effects;
  return {
    effects,
    total: counts.reduce((sum, row) => sum + row.effects, 0),
    duplicates: duplicates.map((row) => ({
      kind: row.kind,
      resource: row.resource,
      requestIdentity: row.request_identity,
      effects: row.effects,
      externalReferences: row.external_references,
    })),
    fenceRegressions: regressions.map((row) => ({
      resource: row.resource,
      epoch: row.epoch,
      term: row.term,
      previousEpoch: row.previous_epoch,
      previousTerm: row.previous_term,
      externalReference: row.external_reference,
    })),
    staleTermRejections: incidentsOf("stale_term"),
    droppedResponses: incidentsOf("dropped_response"),
  };
}

function send(response: http.ServerResponse, { status, body, headers = {} }: Reply): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** The resource the epoch probe writes to; no step uses it. */
const EPOCH_PROBE_RESOURCE = "fenceline-epoch-probe";

function epochIn(body: unknown): string {
  const epoch = (body as { epoch?: unknown } | null)?.epoch;
  if (typeof epoch !== "string" || !/^[1-9]\d{0,18}$/.test(epoch) || BigInt(epoch) > MAX_BIGINT) {
    throw refused(400, "invalid epoch", "body must be { \"epoch\": \"<positive 64-bit integer as a string>\" }");
  }
  return epoch;
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw refused(413, "payload too large", `the body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw refused(400, "invalid json", "the body is not JSON");
  }
}

function optionalHeader(request: http.IncomingMessage, name: string): string | null {
  const value = request.headers[name];
  return typeof value === "string" && value !== "" ? value : null;
}

function requiredHeader(request: http.IncomingMessage, name: string): string {
  const value = optionalHeader(request, name);
  if (value === null) throw refused(400, "missing header", `header ${name} is required`);
  return value;
}

function bigintHeader(request: http.IncomingMessage, name: string): bigint {
  const value = requiredHeader(request, name);
  if (!/^\d{1,19}$/.test(value) || BigInt(value) > MAX_BIGINT) throw refused(400, "invalid header", `header ${name} must be a non-negative 64-bit integer`);
  return BigInt(value);
}

function notAllowed(method: string, path: string): Refused {
  return refused(405, "method not allowed", `${method} is not allowed on ${path}`);
}

function payloadMismatch(what: string, value: string): Refused {
  return refused(422, "payload mismatch", `${what} ${value} was first used with a different payload; no effect was applied`);
}
