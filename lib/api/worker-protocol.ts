/**
 * The HTTP worker protocol's server side, framework-free: `answerWorkerProtocol(request, pool)`
 * answers `POST /api/worker/<operation>` with the same engine functions the direct transport
 * calls (lib/worker/coordinator.ts). Two servers hand requests to it: `workerProtocolListener`,
 * a plain node:http listener that builds no Fetch API objects (the benchmark's protocol server,
 * tests, an adopter serving the protocol on its own), and `handleWorkerProtocol`, the Fetch API
 * form the Next route (app/api/worker/[operation]/route.ts) calls. One implementation of each
 * operation underneath.
 *
 * Every request carries a worker bearer token (authenticateWorker), which names a worker identity
 * (lib/auth/worker-tokens.ts). Every session a request names must have been registered through
 * this protocol with that same token; beyond that, the engine's own fencing decides: a lease
 * presented by another session is refused and recorded as a fencing rejection.
 * Engine refusals travel as problem+json with their `code` and the error's fields (toProblem), so
 * the client can raise the same error classes the direct transport raises.
 */
import { retentionScheduleFromEnv } from "@/lib/env";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Pool } from "pg";
import type { z } from "zod";
import { authorityLostFields, MAX_WAIT_MS, workerOperations, type WorkerOperation, type wireClaimedStep, type wireLease } from "@/lib/api/contract/worker";
import { MAX_BODY_BYTES, parseJsonBody, problemFor, readLimitedBody, requireJsonContentType, tooLarge } from "@/lib/api/http";
import { HttpProblem, problemAnswer } from "@/lib/api/problems";
import { beginInvocation, observeEffectAbsent, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { sessionPoolOf } from "@/lib/db/pool";
import { run } from "@/lib/engine/db";
import { NotFoundError } from "@/lib/engine/errors";
import { postLateObservation } from "@/lib/engine/late-observation";
import { claimSteps, releaseLease, renewLeases } from "@/lib/engine/lease";
import { acquirePermit, holdPermit, releasePermit } from "@/lib/engine/permit";
import { isPermit } from "@/lib/engine/permit-policy";
import { commitReceipts } from "@/lib/engine/receipt";
import { reportFailure } from "@/lib/engine/recovery";
import { servedBySession } from "@/lib/engine/registration";
import { heartbeatSession, registerWorkerSession, stopSession } from "@/lib/engine/session";
import type { ClaimedStep, LeaseHandle, WorkflowVersion } from "@/lib/engine/types";
import { workerTokenCache, type WorkerIdentity, type WorkerTokenCache } from "@/lib/auth/worker-tokens";
import type { Coordinator } from "@/lib/worker/coordinator";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import type { ProtocolTimings } from "@/lib/worker/protocol-timings";

/**
 * The one place that decides whether a request comes from a worker, and which: the bearer token's
 * hash must name an unrevoked worker token. A revoked token is refused at once, on every operation.
 */
export async function authenticateWorker(authorization: string | null | undefined, pool: Pool): Promise<WorkerIdentity> {
  const match = /^Bearer\s+(\S{1,512})\s*$/i.exec(authorization ?? "");
  const identity = match ? await stateOf(pool).tokens.identify(match[1]!) : null;
  if (!identity) {
    throw new HttpProblem("unauthorized", "a valid, unrevoked worker token is required (Authorization: Bearer <token>)", {}, { "www-authenticate": 'Bearer realm="fenceline-worker"' });
  }
  return identity;
}

// ---- per-pool state: the LISTEN connection for long polls, and sessions known to be ours -----

/**
 * `sessions` maps "<token id>:<session id>" pairs already checked to belong together to the
 * workflow versions the session registered to serve; `tokens` knows unrevoked tokens' identities.
 */
type PoolState = { readonly waiter: Coordinator; readonly sessions: Map<string, readonly WorkflowVersion[]>; readonly tokens: WorkerTokenCache };
const states = new WeakMap<Pool, PoolState>();
const MAX_CACHED_SESSIONS = 10_000;

function stateOf(pool: Pool): PoolState {
  let state = states.get(pool);
  if (!state) {
    const listenPool = sessionPoolOf(pool);
    state = { waiter: directCoordinator(pool, { listenPool, retention: retentionScheduleFromEnv() }), sessions: new Map(), tokens: workerTokenCache(pool, listenPool) };
    states.set(pool, state);
    // The listeners hold connections of the pool, and pool.end() waits for every connection to
    // come back: ending the pool closes them first, whoever ends it.
    const end = pool.end.bind(pool);
    pool.end = (() => closeWorkerProtocol(pool).then(() => end())) as Pool["end"];
  }
  return state;
}

/** Closes a pool's listeners: long polls and token revocations (tests and benchmarks that end their pool). */
export async function closeWorkerProtocol(pool: Pool): Promise<void> {
  const state = states.get(pool);
  states.delete(pool);
  await state?.waiter.close();
  await state?.tokens.close();
}

const sessionOfWorker = {
  name: "worker_protocol_session_of_worker",
  text: `SELECT 1 FROM worker_session WHERE id = $1 AND transport = 'http' AND worker_token_id = $2::bigint`,
} as const;

/**
 * Refuses (403) a session that was not registered through this protocol with this worker's
 * token; returns the workflow versions it serves.
 */
async function requireSession(pool: Pool, worker: WorkerIdentity, sessionId: string): Promise<readonly WorkflowVersion[]> {
  const { sessions } = stateOf(pool);
  const key = `${worker.tokenId}:${sessionId}`;
  const known = sessions.get(key);
  if (known) return known;
  const rows = await run(pool, sessionOfWorker, [sessionId, worker.tokenId]);
  if (rows.length === 0) throw new HttpProblem("unknown-session", `session ${sessionId} was not registered through the worker protocol by ${worker.workerName}`);
  const served = await servedBySession(pool, sessionId);
  remember(sessions, key, served);
  return served;
}

function remember(sessions: Map<string, readonly WorkflowVersion[]>, key: string, served: readonly WorkflowVersion[]): void {
  if (sessions.size >= MAX_CACHED_SESSIONS) sessions.delete(sessions.keys().next().value!);
  sessions.set(key, served);
}

// ---- wire conversions --------------------------------------------------------------------------

const leaseOf = (wire: z.output<typeof wireLease>): LeaseHandle => ({ stepId: wire.stepId, fencingTerm: BigInt(wire.fencingTerm), sessionId: wire.sessionId });

const claimedToWire = (step: ClaimedStep): z.input<typeof wireClaimedStep> => ({
  ...step,
  fencingTerm: step.fencingTerm.toString(),
  epoch: step.epoch.toString(),
  deadlineAt: step.deadlineAt.toISOString(),
  expiresAt: step.expiresAt.toISOString(),
  dbNow: step.dbNow.toISOString(),
  waits: { count: step.waits.count, firstAt: step.waits.firstAt?.toISOString() ?? null, lastAt: step.waits.lastAt?.toISOString() ?? null },
});

/** An answer of the protocol as the servers write it: no Fetch API objects on the hot path. */
export type WorkerProtocolAnswer = { readonly status: number; readonly headers: Record<string, string>; readonly body: string | null };

const NO_CONTENT: WorkerProtocolAnswer = { status: 204, headers: { "cache-control": "no-store" }, body: null };
const noContent = () => NO_CONTENT;
const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" } as const;

// ---- the operations ----------------------------------------------------------------------------

type Body<O extends WorkerOperation> = z.output<(typeof workerOperations)[O]["body"]>;
/** `clientGone` turns true when the client went away (a long poll then claims nothing more). */
type Handlers = { [O in WorkerOperation]: (pool: Pool, body: Body<O>, worker: WorkerIdentity, clientGone: () => boolean) => Promise<WorkerProtocolAnswer> };

type AnswerOf<O extends WorkerOperation> = (typeof workerOperations)[O]["response"] extends infer S extends z.ZodType ? z.input<S> : never;

/**
 * An answer of the operation's response type, serialised as it is: the types keep it to the
 * response schema, and the protocol tests check every answer against the schema itself. (Parsing
 * each answer through zod here cost more per claimed step than the rest of the answer.)
 */
const respond = <O extends WorkerOperation>(_operation: O, data: AnswerOf<O>): WorkerProtocolAnswer => ({ status: 200, headers: JSON_HEADERS, body: JSON.stringify(data) });

const handlers: Handlers = {
  "register-session": async (pool, body, worker) => {
    const { sessionId, served } = await registerWorkerSession(pool, {
      transport: "http",
      host: body.host ?? "unknown",
      pid: body.pid ?? 0,
      workerTokenId: worker.tokenId,
      registration: body.definitions,
    });
    remember(stateOf(pool).sessions, `${worker.tokenId}:${sessionId}`, served);
    return respond("register-session", { sessionId, served });
  },
  heartbeat: async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    return respond("heartbeat", { alive: await heartbeatSession(pool, body.sessionId) });
  },
  "stop-session": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    await stopSession(pool, body.sessionId, body.reason);
    return noContent();
  },
  claim: async (pool, body, worker) => {
    const served = await requireSession(pool, worker, body.sessionId);
    const steps = await claimSteps(pool, body.sessionId, served, body.limit);
    return respond("claim", { steps: steps.map(claimedToWire) });
  },
  renew: async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    const results = await renewLeases(
      pool,
      body.sessionId,
      body.leases.map((lease) => ({ stepId: lease.stepId, fencingTerm: BigInt(lease.fencingTerm), sessionId: body.sessionId, checkpointVersion: lease.checkpointVersion })),
    );
    return respond("renew", {
      results: results.map((result) =>
        result.renewed ? { ...result, expiresAt: result.expiresAt.toISOString(), dbNow: result.dbNow.toISOString() } : result,
      ),
    });
  },
  "persist-request-identity": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    return respond("persist-request-identity", await persistRequestIdentity(pool, leaseOf(body.lease), body.proposed, body.adapterVersion));
  },
  "begin-invocation": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    return respond("begin-invocation", await beginInvocation(pool, leaseOf(body.lease)));
  },
  "observe-response": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    return respond("observe-response", await observeResponse(pool, leaseOf(body.lease), body.externalReference, body.result));
  },
  "observe-effect-absent": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    return respond("observe-effect-absent", await observeEffectAbsent(pool, leaseOf(body.lease), body.answer));
  },
  "acquire-permit": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    const outcome = await acquirePermit(pool, leaseOf(body.lease), body.request);
    return respond(
      "acquire-permit",
      isPermit(outcome)
        ? { permit: { permitId: outcome.permitId, expiresAt: outcome.expiresAt.toISOString(), rated: outcome.rated }, refusal: null }
        : { permit: null, refusal: { waitMs: outcome.waitMs, reason: outcome.reason } },
    );
  },
  "release-permit": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    await requirePermitOwner(pool, body.permitId, body.sessionId);
    await releasePermit(pool, body.permitId);
    return noContent();
  },
  "hold-permit": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    await requirePermitOwner(pool, body.permitId, body.sessionId);
    await holdPermit(pool, body.permitId, body.reason, body.holdMs);
    return noContent();
  },
  "commit-receipts": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    return respond("commit-receipts", { results: await commitWireReceipts(pool, body.sessionId, body.receipts) });
  },
  "commit-receipts-and-claim": async (pool, body, worker) => {
    const served = await requireSession(pool, worker, body.sessionId);
    const results = await commitWireReceipts(pool, body.sessionId, body.receipts);
    const steps = body.claimLimit > 0 ? await claimSteps(pool, body.sessionId, served, body.claimLimit) : [];
    return respond("commit-receipts-and-claim", { results, steps: steps.map(claimedToWire) });
  },
  "claim-or-wait": async (pool, body, worker, clientGone) => {
    const served = await requireSession(pool, worker, body.sessionId);
    const deadline = performance.now() + Math.min(body.timeoutMs, MAX_WAIT_MS);
    let steps = await claimSteps(pool, body.sessionId, served, body.limit);
    // A wake-up is a hint (work for another session, or a notice from before the claim): the poll
    // answers empty only at its timeout. A client that went away would never run what is claimed.
    while (steps.length === 0 && body.limit > 0 && deadline - performance.now() > 0 && !clientGone()) {
      await stateOf(pool).waiter.waitForWork(deadline - performance.now());
      if (!clientGone()) steps = await claimSteps(pool, body.sessionId, served, body.limit);
    }
    // The client can go while the claim runs (a stopping worker): its steps go back at once rather
    // than waiting out their leases, since nothing was invoked under them.
    if (steps.length > 0 && clientGone()) {
      await Promise.all(
        steps.map((step) =>
          releaseLease(pool, { stepId: step.stepId, fencingTerm: step.fencingTerm, sessionId: body.sessionId }, "the long poll's client went away", { effectAbsent: true }),
        ),
      );
      steps = [];
    }
    return respond("claim-or-wait", { steps: steps.map(claimedToWire) });
  },
  "report-failure": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    await reportFailure(pool, leaseOf(body.lease), body.reason);
    return noContent();
  },
  release: async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    await releaseLease(pool, leaseOf(body.lease), body.reason, { delayMs: body.delayMs, effectAbsent: body.effectAbsent });
    return noContent();
  },
  "post-late-observation": async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    await postLateObservation(pool, leaseOf(body.lease), body.observation);
    return noContent();
  },
  recover: async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    return respond("recover", { settled: await stateOf(pool).waiter.recover(body.sessionId, body.batchSize) });
  },
  "wait-for-work": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    const startedAt = performance.now();
    const timeoutMs = Math.min(body.timeoutMs, MAX_WAIT_MS);
    await stateOf(pool).waiter.waitForWork(timeoutMs);
    return respond("wait-for-work", { woken: performance.now() - startedAt < timeoutMs - 1 });
  },
  park: async (pool, body, worker) => {
    await requireSession(pool, worker, body.lease.sessionId);
    const armed = await stateOf(pool).waiter.park(leaseOf(body.lease), body.wait, body.reason);
    return respond("park", { ...armed, dueAt: armed.dueAt?.toISOString() ?? null, detail: { ...armed.detail } });
  },
  // What it settles is settled for every worker, so a client that goes away mid-poll changes nothing.
  "settle-due": async (pool, body, worker) => {
    await requireSession(pool, worker, body.sessionId);
    return respond("settle-due", { settled: await stateOf(pool).waiter.settleDue(body.limit, Math.min(body.timeoutMs, MAX_WAIT_MS)) });
  },
};

/** Commits receipts presented on the wire, each fenced on its own lease; refusals travel as their fields. */
async function commitWireReceipts(pool: Pool, sessionId: string, receipts: Body<"commit-receipts">["receipts"]) {
  const results = await commitReceipts(
    pool,
    sessionId,
    receipts.map((receipt) => ({ lease: { stepId: receipt.stepId, fencingTerm: BigInt(receipt.fencingTerm), sessionId }, conclusion: receipt.conclusion })),
  );
  return results.map((result) => (result.committed ? result : { stepId: result.stepId, committed: false as const, error: authorityLostFields(result.error) }));
}

/** A permit may be settled only by the session whose lease took it. */
async function requirePermitOwner(pool: Pool, permitId: string, sessionId: string): Promise<void> {
  const { rows } = await pool.query<{ owner: string }>(
    `SELECT l.owner_session_id AS owner FROM adapter_permit p JOIN lease l ON l.step_id = p.step_id AND l.fencing_term = p.fencing_term WHERE p.id = $1`,
    [permitId],
  );
  if (rows.length === 0) throw new NotFoundError("adapter permit", permitId);
  if (rows[0]!.owner !== sessionId) throw new HttpProblem("not-your-permit", `permit ${permitId} was taken under another session's lease`);
}

const OPERATION_PATH = /\/api\/worker\/([a-z-]+)\/?$/;

/** How the protocol is served. */
export type WorkerProtocolOptions = {
  /** Records where each request spends its time (the benchmark's HTTP breakdown). */
  readonly timings?: ProtocolTimings;
};

/** One request of the protocol, as a server read it. */
export type WorkerProtocolRequest = {
  /** The request target's path, e.g. `/api/worker/claim` (a query string is ignored). */
  readonly path: string;
  readonly method: string;
  readonly authorization: string | null | undefined;
  readonly contentType: string | null | undefined;
  /** The body's bytes; null when it was larger than MAX_BODY_BYTES. */
  readonly body: Uint8Array | null;
  /** True once the client went away. */
  readonly clientGone: () => boolean;
};

/** Answers one request of the worker protocol; never throws: a refusal is its problem+json answer. */
export async function answerWorkerProtocol(request: WorkerProtocolRequest, pool: Pool, options: WorkerProtocolOptions = {}): Promise<WorkerProtocolAnswer> {
  const { timings } = options;
  try {
    const query = request.path.indexOf("?");
    const path = query === -1 ? request.path : request.path.slice(0, query);
    const name = OPERATION_PATH.exec(path)?.[1];
    if (!name || !Object.hasOwn(workerOperations, name)) throw new HttpProblem("not-found", `no worker operation at ${path}`);
    if (request.method !== "POST") throw new HttpProblem("method-not-allowed", "worker operations are POST", {}, { allow: "POST" });
    const startedAt = performance.now();
    const worker = await authenticateWorker(request.authorization, pool);
    const authenticatedAt = performance.now();
    const operation = name as WorkerOperation;
    requireJsonContentType(request.contentType);
    if (request.body === null) throw tooLarge();
    const body = parseJsonBody(request.body, workerOperations[operation].body);
    const readAt = performance.now();
    const answer = await (handlers[operation] as (pool: Pool, body: unknown, worker: WorkerIdentity, clientGone: () => boolean) => Promise<WorkerProtocolAnswer>)(
      pool,
      body,
      worker,
      request.clientGone,
    );
    if (timings) {
      timings.add(operation, "auth", authenticatedAt - startedAt);
      timings.add(operation, "body", readAt - authenticatedAt);
      timings.add(operation, "work", performance.now() - readAt);
    }
    return answer;
  } catch (error) {
    const refusal = problemFor(error);
    return problemAnswer(refusal.code, refusal.detail, refusal.extra, refusal.headers);
  }
}

/** The protocol for a Fetch API server (the Next route): the same answers as answerWorkerProtocol. */
export async function handleWorkerProtocol(request: Request, pool: Pool, options: WorkerProtocolOptions = {}): Promise<Response> {
  let body: Uint8Array | null;
  try {
    body = await readLimitedBody(request);
  } catch {
    // Larger than the limit, or cut off: answered as too large.
    body = null;
  }
  const answer = await answerWorkerProtocol(
    {
      path: new URL(request.url).pathname,
      method: request.method,
      authorization: request.headers.get("authorization"),
      contentType: request.headers.get("content-type"),
      body,
      clientGone: () => request.signal.aborted,
    },
    pool,
    options,
  );
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * The protocol as a node:http request listener, without Fetch API objects:
 * `http.createServer(workerProtocolListener(pool)).listen(port)`. A body beyond MAX_BODY_BYTES
 * is not kept (413).
 */
export function workerProtocolListener(pool: Pool, options: WorkerProtocolOptions = {}): (request: IncomingMessage, response: ServerResponse) => void {
  const { timings } = options;
  return (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    incoming.on("end", () => {
      const endedAt = performance.now();
      let gone = false;
      outgoing.once("close", () => {
        if (!outgoing.writableFinished) gone = true;
      });
      const url = incoming.url ?? "/";
      void answerWorkerProtocol(
        {
          path: url,
          method: incoming.method ?? "GET",
          authorization: incoming.headers.authorization,
          contentType: incoming.headers["content-type"],
          body: size > MAX_BODY_BYTES ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
          clientGone: () => gone,
        },
        pool,
        options,
      )
        .then((answer) => {
          if (answer.body === null) {
            outgoing.writeHead(answer.status, answer.headers);
            outgoing.end();
          } else {
            outgoing.writeHead(answer.status, { ...answer.headers, "content-length": Buffer.byteLength(answer.body) });
            outgoing.end(answer.body);
          }
          timings?.add(OPERATION_PATH.exec(url)?.[1] ?? "unknown", "total", performance.now() - endedAt);
        })
        .catch((error: unknown) => {
          console.error("[worker-protocol] answer failed:", error);
          if (!outgoing.headersSent) outgoing.writeHead(500);
          outgoing.end();
        });
    });
  };
}
