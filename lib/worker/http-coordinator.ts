/**
 * The HTTP transport of the Coordinator: every operation is one `POST /api/worker/<operation>`
 * (lib/api/worker-protocol.ts) with the worker bearer token, over a pool of keep-alive
 * connections (node:http's Agent; Node's fetch cost about as much CPU per step as the engine's
 * statements, decision 007).
 *
 * Answers are checked before they are used: the hot ones (claimed steps, receipt results) field
 * by field for what this client reads (lib/worker/wire-checks.ts), the rest by their zod schema.
 *
 * Errors keep their meaning across the wire: an engine refusal (problem+json with a `code`)
 * is re-raised as the engine's own error class (AuthorityLostError, CheckpointOrderError,
 * ReleaseRefusedError, NotFoundError), so the worker runtime behaves as with the direct
 * transport. Anything else — connection refused, a timeout, a 5xx, a 401, an unreadable
 * answer — is a plain Error: the outcome is unknown, never "authority lost". Nothing is retried
 * here; the worker decides (a renewal that failed in transit makes its attempt "uncertain").
 */
import http from "node:http";
import https from "node:https";
import { hostname } from "node:os";
import type { z } from "zod";
import {
  MAX_WAIT_MS,
  workerOperations,
  workerProblemFields,
  type WorkerOperation,
} from "@/lib/api/contract/worker";
import { AuthorityLostError, CheckpointOrderError, DefinitionConflictError, InvalidDefinitionError, InvalidWaitError, NotFoundError, ReleaseRefusedError } from "@/lib/engine/errors";
import type { ClaimedStep, LeaseHandle, ReceiptRequest, ReceiptResult } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";
import type { ProtocolTimings } from "./protocol-timings";
import { authorityLost, claimedStepsOf, receiptResultsOf, WireCheckError } from "./wire-checks";

export type HttpCoordinatorOptions = {
  /** The web app's origin, e.g. http://127.0.0.1:3000 */
  readonly baseUrl: string;
  readonly token: string;
  /** How long one request may go without an answer before its outcome counts as unknown (default 10 s). */
  readonly timeoutMs?: number;
  /** Records where each call spends its time (the benchmark's HTTP breakdown). */
  readonly timings?: ProtocolTimings;
};

/** A request of the protocol that got no usable answer: its outcome is unknown. */
export class WorkerTransportError extends Error {
  readonly code = "transport_failed";
  constructor(
    readonly operation: string,
    message: string,
    readonly status: number | null = null,
    options?: ErrorOptions,
  ) {
    super(`worker protocol ${operation}: ${message}`, options);
  }
}

type Body<O extends WorkerOperation> = z.input<(typeof workerOperations)[O]["body"]>;
type Answer<O extends WorkerOperation> = (typeof workerOperations)[O]["response"] extends z.ZodType
  ? z.output<(typeof workerOperations)[O]["response"]>
  : undefined;

const wireLease = (lease: LeaseHandle) => ({ stepId: lease.stepId, fencingTerm: lease.fencingTerm.toString(), sessionId: lease.sessionId });

/** Operations whose answers are checked by wire-checks.ts instead of their zod schema. */
const CHECKED_BY_HAND: ReadonlySet<WorkerOperation> = new Set(["claim", "claim-or-wait", "commit-receipts", "commit-receipts-and-claim"]);

export function httpCoordinator(options: HttpCoordinatorOptions): Coordinator {
  const base = new URL(options.baseUrl.replace(/\/+$/, ""));
  const basePath = base.pathname.replace(/\/+$/, "");
  const secure = base.protocol === "https:";
  const transport = secure ? https : http;
  // Keep-alive: a worker's exchanges reuse a few connections instead of a handshake each.
  const agent = new transport.Agent({ keepAlive: true, noDelay: true, scheduling: "lifo" });
  const timeoutMs = options.timeoutMs ?? 10_000;
  const authorization = `Bearer ${options.token}`;
  /** Requests in flight: close() ends them (long polls at once). */
  const inFlight = new Set<http.ClientRequest>();
  let closed = false;
  /** Local waits (after a failed long poll): close() ends them. */
  const localWaits = new Set<() => void>();
  /** The session this coordinator registered: permits are settled in its name. */
  let session: string | null = null;

  /** One POST; resolves with the status and body text, rejects on a transport failure or after `limitMs` without an answer. */
  function post(operation: string, encoded: string, limitMs: number, stop?: AbortSignal): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      if (closed) return reject(new WorkerTransportError(operation, "coordinator closed"));
      const request = transport.request({
        agent,
        protocol: base.protocol,
        hostname: base.hostname,
        port: base.port,
        path: `${basePath}/api/worker/${operation}`,
        method: "POST",
        headers: { authorization, "content-type": "application/json", accept: "application/json", "content-length": Buffer.byteLength(encoded) },
        // Idle time on the socket: no answer within it is an unknown outcome.
        timeout: limitMs,
      });
      inFlight.add(request);
      const onStop = () => request.destroy(new Error("stopped"));
      stop?.addEventListener("abort", onStop, { once: true });
      const settle = () => {
        inFlight.delete(request);
        stop?.removeEventListener("abort", onStop);
      };
      request.on("timeout", () => request.destroy(new WorkerTransportError(operation, `no answer within ${limitMs} ms`)));
      request.on("error", (error) => {
        settle();
        reject(error instanceof WorkerTransportError ? error : new WorkerTransportError(operation, describe(error), null, { cause: error }));
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => {
          settle();
          reject(new WorkerTransportError(operation, `the answer was cut off: ${String(error)}`, response.statusCode ?? null, { cause: error }));
        });
        response.on("end", () => {
          settle();
          if (!response.complete) {
            reject(new WorkerTransportError(operation, "the answer was cut off", response.statusCode ?? null));
            return;
          }
          resolve({ status: response.statusCode ?? 0, text: (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8") });
        });
      });
      request.end(encoded);
    });
  }

  async function call<O extends WorkerOperation>(operation: O, body: Body<O>, waitMs = 0, stop?: AbortSignal): Promise<Answer<O>> {
    const limitMs = Math.ceil(timeoutMs + waitMs);
    const startedAt = performance.now();
    const encoded = JSON.stringify(body);
    const encodedAt = performance.now();
    const { status, text } = await post(operation, encoded, limitMs, stop);
    const readAt = performance.now();
    if (status < 200 || status > 299) throw refusal(operation, status, text);
    const schema = workerOperations[operation].response;
    let answer: Answer<O> = undefined as Answer<O>;
    if (schema) {
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        throw new WorkerTransportError(operation, "the answer is not JSON", status);
      }
      if (CHECKED_BY_HAND.has(operation)) {
        answer = data as Answer<O>;
      } else {
        const parsed = schema.safeParse(data);
        if (!parsed.success) throw new WorkerTransportError(operation, `the answer does not match the protocol: ${parsed.error.message}`, status);
        answer = parsed.data as Answer<O>;
      }
    }
    const timings = options.timings;
    if (timings) {
      const decodedAt = performance.now();
      timings.add(operation, "encode", encodedAt - startedAt);
      timings.add(operation, "exchange", readAt - encodedAt);
      timings.add(operation, "decode", decodedAt - readAt);
      timings.add(operation, "total", decodedAt - startedAt);
    }
    return answer;
  }

  /**
   * What `check` reads from an answer (its claimed steps, its receipt results), checked and
   * converted; a mismatch is a transport error, never a step or a result.
   */
  function checked<T>(operation: WorkerOperation, check: (answer: unknown) => T, answer: unknown): T {
    try {
      return check(answer);
    } catch (error) {
      if (error instanceof WireCheckError) throw new WorkerTransportError(operation, `the answer does not match the protocol: ${error.message}`, 200);
      throw error;
    }
  }
  const claimed = (operation: WorkerOperation, answer: unknown): ClaimedStep[] => checked(operation, claimedStepsOf, answer);
  const receiptResults = (operation: WorkerOperation, answer: unknown): ReceiptResult[] => checked(operation, receiptResultsOf, answer);

  return {
    transport: "http",
    registerSession: async (registration) => {
      // The same data: the wire schema's types are mutable where the registration's are read-only.
      const definitions = registration as Body<"register-session">["definitions"];
      const { sessionId, served } = await call("register-session", { host: hostname().slice(0, 255), pid: process.pid, definitions });
      session = sessionId;
      return { sessionId, served };
    },
    heartbeat: async (sessionId) => (await call("heartbeat", { sessionId })).alive,
    stopSession: async (sessionId, reason) => {
      await call("stop-session", { sessionId, reason });
    },
    // The server claims what the session registered to serve; `served` is the same list.
    claim: async (sessionId, _served, limit) => {
      if (limit <= 0) return [];
      return claimed("claim", await call("claim", { sessionId, limit }));
    },
    claimOrWait: async (sessionId, _served, limit, waitMs, signal) => {
      if (limit <= 0 || signal?.aborted) return [];
      const timeoutMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.round(waitMs)));
      try {
        return claimed("claim-or-wait", await call("claim-or-wait", { sessionId, limit, timeoutMs }, timeoutMs, signal));
      } catch (error) {
        // Stopping ends the long poll: the server claims nothing more once the request is gone.
        if (signal?.aborted) return [];
        throw error;
      }
    },
    renew: async (sessionId, requests) => {
      if (requests.length === 0) return [];
      for (const request of requests) {
        if (request.sessionId !== sessionId) throw new Error("renew: every lease must belong to the session");
      }
      const { results } = await call("renew", {
        sessionId,
        leases: requests.map((r) => ({ stepId: r.stepId, fencingTerm: r.fencingTerm.toString(), checkpointVersion: r.checkpointVersion })),
      });
      return results.map((result) =>
        result.renewed ? { stepId: result.stepId, renewed: true, expiresAt: new Date(result.expiresAt), dbNow: new Date(result.dbNow) } : result,
      );
    },
    persistRequestIdentity: (lease, proposed, adapterVersion) => call("persist-request-identity", { lease: wireLease(lease), proposed, adapterVersion }),
    beginInvocation: (lease) => call("begin-invocation", { lease: wireLease(lease) }),
    observeResponse: (lease, externalReference, result) => call("observe-response", { lease: wireLease(lease), externalReference, result: result ?? null }),
    observeEffectAbsent: (lease, answer) => call("observe-effect-absent", { lease: wireLease(lease), answer: answer ?? null }),
    acquirePermit: async (lease, request) => {
      const { permit, refusal } = await call("acquire-permit", { lease: wireLease(lease), request: { ...request } });
      return permit ? { permitId: permit.permitId, expiresAt: new Date(permit.expiresAt), rated: permit.rated } : { waitMs: refusal.waitMs, reason: refusal.reason };
    },
    releasePermit: async (permitId) => {
      await call("release-permit", { sessionId: requireSession(), permitId });
    },
    holdPermit: async (permitId, reason, holdMs) => {
      await call("hold-permit", { sessionId: requireSession(), permitId, reason, holdMs });
    },
    commitReceipts: async (sessionId, requests) => {
      if (requests.length === 0) return [];
      return receiptResults("commit-receipts", await call("commit-receipts", { sessionId, receipts: wireReceipts("commitReceipts", sessionId, requests) }));
    },
    commitAndClaim: async (sessionId, _served, requests, claimLimit) => {
      const answer = await call("commit-receipts-and-claim", {
        sessionId,
        receipts: wireReceipts("commitAndClaim", sessionId, requests),
        claimLimit: Math.max(0, claimLimit),
      });
      return { results: receiptResults("commit-receipts-and-claim", answer), claimed: claimed("commit-receipts-and-claim", answer) };
    },
    reportFailure: async (lease, reason) => {
      await call("report-failure", { lease: wireLease(lease), reason });
    },
    release: async (lease, reason, releaseOptions = {}) => {
      await call("release", { lease: wireLease(lease), reason, delayMs: releaseOptions.delayMs, effectAbsent: releaseOptions.effectAbsent });
    },
    postLateObservation: async (lease, observation) => {
      await call("post-late-observation", { lease: wireLease(lease), observation: { ...observation, result: observation.result ?? null } });
    },
    park: async (lease, wait, reason) => {
      const armed = await call("park", { lease: wireLease(lease), wait: { room: wait.room, request: wait.request ?? null }, reason });
      return { ...armed, dueAt: armed.dueAt === null ? null : new Date(armed.dueAt) };
    },
    settleDue: async (limit, waitMs, signal) => {
      if (signal?.aborted) return 0;
      const timeoutMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.round(waitMs)));
      try {
        return (await call("settle-due", { sessionId: requireSession(), limit, timeoutMs }, timeoutMs, signal)).settled;
      } catch (error) {
        if (signal?.aborted) return 0;
        throw error;
      }
    },
    recover: async (decidedBy, batchSize) => (await call("recover", { sessionId: decidedBy, batchSize })).settled,
    // Never throws, like the direct transport's: a failed long poll only costs latency, so the
    // rest of the wait is spent locally and the caller polls again.
    waitForWork: async (waitMs) => {
      const startedAt = performance.now();
      const sessionId = session;
      if (sessionId !== null && !closed) {
        try {
          await call("wait-for-work", { sessionId, timeoutMs: Math.max(0, Math.min(MAX_WAIT_MS, Math.round(waitMs))) }, waitMs);
          return;
        } catch {
          // fall through to a local wait
        }
      }
      const remainingMs = waitMs - (performance.now() - startedAt);
      if (remainingMs <= 0 || closed) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, remainingMs);
        localWaits.add(done);
        function done() {
          clearTimeout(timer);
          localWaits.delete(done);
          resolve();
        }
      });
    },
    close: async () => {
      closed = true;
      for (const request of inFlight) request.destroy(new WorkerTransportError("close", "coordinator closed"));
      for (const done of localWaits) done();
      agent.destroy();
    },
  };

  function requireSession(): string {
    if (session === null) throw new Error("httpCoordinator: no session registered through this coordinator");
    return session;
  }
}

function wireReceipts(operation: string, sessionId: string, requests: readonly ReceiptRequest[]): Body<"commit-receipts">["receipts"] {
  return requests.map(({ lease, conclusion }) => {
    if (lease.sessionId !== sessionId) throw new Error(`${operation}: every lease must belong to the session`);
    return {
      stepId: lease.stepId,
      fencingTerm: lease.fencingTerm.toString(),
      conclusion: conclusion.kind === "effect" ? { ...conclusion, result: conclusion.result ?? null } : conclusion,
    };
  });
}

/** The socket error's message, with its code when it has one (ECONNREFUSED, ECONNRESET…). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/** A non-2xx answer: an engine refusal becomes its own error class; anything else is a plain Error. */
function refusal(operation: string, status: number, text: string): Error {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status === 404 || status === 409 || status === 422) {
    const fields = workerProblemFields.safeParse(body);
    if (fields.success) {
      const f = fields.data;
      switch (f.code) {
        case "authority-lost":
          return authorityLost(f);
        case "checkpoint-out-of-order":
          return new CheckpointOrderError(f.operation, f.stepId);
        case "release-refused":
          return new ReleaseRefusedError(f.stepId, f.checkpoint);
        case "not-found":
          return new NotFoundError(f.what, f.id);
        case "definition-conflict":
          return new DefinitionConflictError(f.subject, f.differences);
        case "invalid-definition":
          return new InvalidDefinitionError(f.problems);
        case "invalid-wait":
          return new InvalidWaitError(f.detail);
      }
    }
  }
  const detail = typeof body === "object" && body !== null && "detail" in body ? String((body as { detail: unknown }).detail) : text.slice(0, 200);
  return new WorkerTransportError(operation, `HTTP ${status}: ${detail}`, status);
}
