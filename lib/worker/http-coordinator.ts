/**
 * The HTTP transport of the Coordinator: every operation is one `POST /api/worker/<operation>`
 * (lib/api/worker-protocol.ts) with the worker bearer token, over keep-alive connections.
 *
 * Errors keep their meaning across the wire: an engine refusal (problem+json with a `code`)
 * is re-raised as the engine's own error class (AuthorityLostError, CheckpointOrderError,
 * ReleaseRefusedError, NotFoundError), so the worker runtime behaves as with the direct
 * transport. Anything else — connection refused, a timeout, a 5xx, a 401, an unreadable
 * answer — is a plain Error: the outcome is unknown, never "authority lost". Nothing is retried
 * here; the worker decides (a renewal that failed in transit makes its attempt "uncertain").
 */
import { hostname } from "node:os";
import type { z } from "zod";
import {
  MAX_WAIT_MS,
  workerOperations,
  workerProblemFields,
  type WorkerOperation,
  type wireAuthorityLost,
  type wireClaimedStep,
} from "@/lib/api/contract/worker";
import { AuthorityLostError, CheckpointOrderError, DefinitionConflictError, InvalidDefinitionError, NotFoundError, ReleaseRefusedError } from "@/lib/engine/errors";
import type { ClaimedStep, LeaseHandle, ReceiptRequest, ReceiptResult } from "@/lib/engine/types";
import type { Coordinator } from "./coordinator";
import type { ProtocolTimings } from "./protocol-timings";

export type HttpCoordinatorOptions = {
  /** The web app's origin, e.g. http://127.0.0.1:3000 */
  readonly baseUrl: string;
  readonly token: string;
  readonly fetch?: typeof fetch;
  /** How long one request may take before its outcome counts as unknown (default 10 s). */
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

const authorityLost = (fields: z.output<typeof wireAuthorityLost>) =>
  new AuthorityLostError(fields.operation, fields.stepId, BigInt(fields.presentedTerm), fields.reason, fields.currentTerm === null ? null : BigInt(fields.currentTerm));

const claimedStep = (wire: z.output<typeof wireClaimedStep>): ClaimedStep => ({
  ...wire,
  fencingTerm: BigInt(wire.fencingTerm),
  epoch: BigInt(wire.epoch),
  deadlineAt: new Date(wire.deadlineAt),
  expiresAt: new Date(wire.expiresAt),
  dbNow: new Date(wire.dbNow),
});

export function httpCoordinator(options: HttpCoordinatorOptions): Coordinator {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const authorization = `Bearer ${options.token}`;
  /** Aborted by close(): ends long polls at once. */
  const closing = new AbortController();
  /** The session this coordinator registered: permits are settled in its name. */
  let session: string | null = null;

  async function call<O extends WorkerOperation>(operation: O, body: Body<O>, waitMs = 0, stop?: AbortSignal): Promise<Answer<O>> {
    const limitMs = Math.ceil(timeoutMs + waitMs);
    const signal = AbortSignal.any([closing.signal, AbortSignal.timeout(limitMs), ...(stop ? [stop] : [])]);
    const startedAt = performance.now();
    const encoded = JSON.stringify(body);
    const encodedAt = performance.now();
    let response: Response;
    try {
      response = await doFetch(`${base}/api/worker/${operation}`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json", accept: "application/json" },
        body: encoded,
        signal,
      });
    } catch (error) {
      const timedOut = signal.aborted && !closing.signal.aborted && !stop?.aborted;
      throw new WorkerTransportError(operation, timedOut ? `no answer within ${limitMs} ms` : describe(error), null, { cause: error });
    }
    const answeredAt = performance.now();
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new WorkerTransportError(operation, `the answer was cut off: ${String(error)}`, response.status, { cause: error });
    }
    const readAt = performance.now();
    if (!response.ok) throw refusal(operation, response.status, text);
    const schema = workerOperations[operation].response;
    let answer: Answer<O> = undefined as Answer<O>;
    if (schema) {
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        throw new WorkerTransportError(operation, "the answer is not JSON", response.status);
      }
      const parsed = schema.safeParse(data);
      if (!parsed.success) throw new WorkerTransportError(operation, `the answer does not match the protocol: ${parsed.error.message}`, response.status);
      answer = parsed.data as Answer<O>;
    }
    const timings = options.timings;
    if (timings) {
      const decodedAt = performance.now();
      timings.add(operation, "encode", encodedAt - startedAt);
      timings.add(operation, "exchange", answeredAt - encodedAt);
      timings.add(operation, "read", readAt - answeredAt);
      timings.add(operation, "decode", decodedAt - readAt);
      timings.add(operation, "total", decodedAt - startedAt);
    }
    return answer;
  }

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
      return (await call("claim", { sessionId, limit })).steps.map(claimedStep);
    },
    claimOrWait: async (sessionId, _served, limit, waitMs, signal) => {
      if (limit <= 0 || signal?.aborted) return [];
      const timeoutMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.round(waitMs)));
      try {
        return (await call("claim-or-wait", { sessionId, limit, timeoutMs }, timeoutMs, signal)).steps.map(claimedStep);
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
      return permit ? { permitId: permit.permitId, expiresAt: new Date(permit.expiresAt) } : { waitMs: refusal.waitMs };
    },
    releasePermit: async (permitId) => {
      await call("release-permit", { sessionId: requireSession(), permitId });
    },
    holdPermit: async (permitId, reason, holdMs) => {
      await call("hold-permit", { sessionId: requireSession(), permitId, reason, holdMs });
    },
    commitReceipts: async (sessionId, requests) => {
      if (requests.length === 0) return [];
      const { results } = await call("commit-receipts", { sessionId, receipts: wireReceipts("commitReceipts", sessionId, requests) });
      return results.map(receiptResult);
    },
    commitAndClaim: async (sessionId, _served, requests, claimLimit) => {
      const { results, steps } = await call("commit-receipts-and-claim", {
        sessionId,
        receipts: wireReceipts("commitAndClaim", sessionId, requests),
        claimLimit: Math.max(0, claimLimit),
      });
      return { results: results.map(receiptResult), claimed: steps.map(claimedStep) };
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
    recover: async (decidedBy, batchSize) => (await call("recover", { sessionId: decidedBy, batchSize })).settled,
    // Never throws, like the direct transport's: a failed long poll only costs latency, so the
    // rest of the wait is spent locally and the caller polls again.
    waitForWork: async (waitMs) => {
      const startedAt = performance.now();
      const sessionId = session;
      if (sessionId !== null && !closing.signal.aborted) {
        try {
          await call("wait-for-work", { sessionId, timeoutMs: Math.max(0, Math.min(MAX_WAIT_MS, Math.round(waitMs))) }, waitMs);
          return;
        } catch {
          // fall through to a local wait
        }
      }
      const remainingMs = waitMs - (performance.now() - startedAt);
      if (remainingMs <= 0 || closing.signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, remainingMs);
        function done() {
          clearTimeout(timer);
          closing.signal.removeEventListener("abort", done);
          resolve();
        }
        closing.signal.addEventListener("abort", done);
      });
    },
    close: async () => {
      closing.abort(new Error("coordinator closed"));
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

const receiptResult = (result: Answer<"commit-receipts">["results"][number]): ReceiptResult =>
  result.committed ? result : { stepId: result.stepId, committed: false, error: authorityLost(result.error) };

/** fetch's own message ("fetch failed") says little; its cause names the socket error. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
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
      }
    }
  }
  const detail = typeof body === "object" && body !== null && "detail" in body ? String((body as { detail: unknown }).detail) : text.slice(0, 200);
  return new WorkerTransportError(operation, `HTTP ${status}: ${detail}`, status);
}
