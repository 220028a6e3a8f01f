/**
 * The app's client: create, read, list and cancel the app's requests over Fenceline's HTTP API
 * with an app key. It uses `fetch` and nothing else, so it runs in any backend (Node, edge
 * runtimes) without pulling in worker or server code. Workflow types cross by `import type`:
 * `client.requests.create<typeof checkout>("checkout", input)` checks `input` against the
 * workflow's schema at compile time, and the workflow's code is never loaded.
 */
import type { WorkflowDefinition, WorkflowInput } from "@/lib/definitions/workflow";
import type { SentEvent } from "@/lib/events/types";
import type { RequestRecord, RequestStatus, RequestWithProgress } from "@/lib/requests/types";
import { errorOf, FencelineConnectionError, WaitTimedOutError } from "./errors";

/** How {@link createClient} reaches Fenceline and authenticates. */
export type ClientOptions = {
  /** Fenceline's base URL, e.g. `process.env.FENCELINE_URL` (`http://127.0.0.1:3000`). */
  readonly url: string;
  /** An app key (`fl_app_…`) with the scopes the calls need: `requests:create`, `requests:read`, `events:send`. */
  readonly apiKey: string;
  /** Replaces the global fetch (tests, proxies, instrumentation). */
  readonly fetch?: typeof fetch;
  /** How long one call may take before it fails with FencelineConnectionError. @defaultValue 10000 */
  readonly timeoutMs?: number;
};

/** Options of `requests.create`. */
export type CreateOptions = {
  /**
   * Makes the call repeatable: the same key and input return the request it first created (so
   * a create whose answer was lost can be sent again), the same key with another input is
   * refused with ConflictError. Keys are per app. Use one per intent, e.g. your order id.
   */
  readonly idempotencyKey?: string;
  /** A registered version of the kind; its highest when absent. */
  readonly version?: number;
  /** Overrides the workflow's own deadline. */
  readonly deadline?: Date;
  /** 1–9, higher claimed first. @defaultValue the workflow's `fairShare.priority` (5 unless it says otherwise) */
  readonly priority?: number;
  /**
   * The tenant or customer this request counts against, e.g. your customer's id (1–200
   * characters). The workflow's limit on steps in flight applies per key, and keys take turns,
   * so one customer's thousands of requests do not hold up another's few. Without one, the
   * request is a key of its own.
   */
  readonly concurrencyKey?: string;
};

/** A created (or, with its idempotency key, found again) request. */
export type CreatedRequest = RequestRecord & {
  /** The end user's page as an absolute URL: send this to your customer. */
  readonly trackingUrl: string;
  /** False when the idempotency key named a request created earlier: this is that request. */
  readonly created: boolean;
};

/** A request with its status and the projection its end user sees. */
export type RequestDetail = RequestWithProgress & { readonly trackingUrl: string };

/** Filters and paging of `requests.list`. */
export type ListOptions = {
  readonly kind?: string;
  readonly status?: RequestStatus;
  /** How many per page (1–200). @defaultValue 50 */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: string;
};

/** One page of the app's requests; pass `nextCursor` as `cursor` for the next (null on the last page). */
export type RequestList = { readonly items: readonly (RequestRecord & { readonly trackingUrl: string })[]; readonly nextCursor: string | null };

/** How long `requests.waitForEnd` waits, and how often it looks. */
export type WaitOptions = {
  /** How long to wait in all. @defaultValue 60000 */
  readonly timeoutMs?: number;
  /** Between reads. @defaultValue 500 */
  readonly intervalMs?: number;
};

/** Any workflow definition, for the type parameter of `create`. */
export type AnyWorkflow = WorkflowDefinition<string, unknown, unknown>;

/** Options of `events.send`. */
export type SendEventOptions = {
  /**
   * Makes the send repeatable: the same key returns the event it first sent (so a send whose
   * answer was lost can be sent again); the same key with another name, key or payload is refused
   * with ConflictError. Keys are per app. Use one per fact, e.g. `confirmed-<order id>`.
   */
  readonly idempotencyKey?: string;
};

/** What {@link createClient} returns: the app's requests and events, through its app key. */
export type FencelineClient = {
  readonly requests: {
    /**
     * Creates a request of a registered workflow kind. Throws InvalidInputError (with the
     * fields), UnknownKindError, ConflictError, RateLimitedError, UnauthorizedError, or
     * FencelineConnectionError when the outcome is unknown (repeat it with the same key).
     */
    create<W extends AnyWorkflow = AnyWorkflow>(kind: W["kind"], input: WorkflowInput<W>, options?: CreateOptions): Promise<CreatedRequest>;
    /** The request's status and end-user projection. Throws NotFoundError for another app's request. */
    get(id: string): Promise<RequestDetail>;
    /** The app's requests, newest first, a page at a time. */
    list(options?: ListOptions): Promise<RequestList>;
    /** Cancels the request; running steps see it at their next checkpoint. Throws ConflictError when it already ended. */
    cancel(id: string, options?: { readonly reason?: string }): Promise<RequestDetail>;
    /**
     * Reads the request until it has ended (completed, failed or cancelled) and returns it then;
     * throws WaitTimedOutError when `timeoutMs` passes first. For scripts and tests: a
     * backend that must react to the end is better served by a webhook.
     */
    waitForEnd(id: string, options?: WaitOptions): Promise<RequestDetail>;
  };
  readonly events: {
    /**
     * Sends an event to the requests that wait for it: the oldest step waiting for `name` with
     * correlation `key` (e.g. `"warehouse.confirmed"`, the order id) takes it and its `payload`
     * becomes that step's result; with none waiting yet, it is kept for the wait that begins later.
     * Durable when this returns. Throws InvalidInputError (a payload the waiting steps' schema
     * refuses, or a name no registered step waits for), ConflictError (the idempotency key names
     * another event), UnauthorizedError, or FencelineConnectionError when the outcome is unknown
     * (send it again with the same key).
     */
    send(name: string, key: string, payload: unknown, options?: SendEventOptions): Promise<SentEvent>;
  };
};

type Call = { readonly method: "GET" | "POST"; readonly path: string; readonly body?: unknown; readonly headers?: Record<string, string> };

/**
 * A client for the app's requests.
 *
 * @example
 * ```ts
 * import { createClient } from "fenceline/client";
 * import type { checkout } from "./workflows";
 *
 * const fenceline = createClient({ url: process.env.FENCELINE_URL!, apiKey: process.env.FENCELINE_API_KEY! });
 * const request = await fenceline.requests.create<typeof checkout>("checkout", { orderId: "o-1", amountCents: 1200 }, { idempotencyKey: "order-o-1" });
 * console.log(request.trackingUrl);
 * ```
 */
export function createClient(options: ClientOptions): FencelineClient {
  const base = new URL(options.url);
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const absolute = (path: string) => new URL(path, base).toString();

  async function call<T>({ method, path, body, headers }: Call): Promise<{ status: number; data: T }> {
    let response: Response;
    let text: string;
    try {
      response = await doFetch(absolute(path), {
        method,
        headers: { authorization: `Bearer ${options.apiKey}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new FencelineConnectionError(`${method} ${path}: no answer (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
    let data: unknown;
    try {
      data = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new FencelineConnectionError(`${method} ${path}: HTTP ${response.status} with an answer that is not JSON`);
    }
    if (!response.ok) throw errorOf(response.status, data, response.headers);
    return { status: response.status, data: data as T };
  }

  const withTrackingUrl = <R extends RequestRecord>(request: R): R & { trackingUrl: string } => ({ ...request, trackingUrl: absolute(request.trackUrl) });
  const idPath = (id: string) => `/api/requests/${encodeURIComponent(id)}`;

  return {
    requests: {
      create: async (kind, input, createOptions = {}) => {
        const { status, data } = await call<RequestRecord>({
          method: "POST",
          path: "/api/requests",
          body: {
            kind,
            input,
            version: createOptions.version,
            deadline: createOptions.deadline?.toISOString(),
            priority: createOptions.priority,
            concurrencyKey: createOptions.concurrencyKey,
          },
          headers: createOptions.idempotencyKey === undefined ? {} : { "idempotency-key": createOptions.idempotencyKey },
        });
        return { ...withTrackingUrl(data), created: status === 201 };
      },
      get: async (id) => withTrackingUrl((await call<RequestWithProgress>({ method: "GET", path: idPath(id) })).data),
      list: async (listOptions = {}) => {
        const query = new URLSearchParams();
        for (const [key, value] of Object.entries(listOptions)) if (value !== undefined) query.set(key, String(value));
        const { data } = await call<{ items: RequestRecord[]; nextCursor: string | null }>({ method: "GET", path: `/api/requests${query.size > 0 ? `?${query}` : ""}` });
        return { items: data.items.map(withTrackingUrl), nextCursor: data.nextCursor };
      },
      cancel: async (id, cancelOptions = {}) =>
        withTrackingUrl((await call<RequestWithProgress>({ method: "POST", path: `${idPath(id)}/cancel`, body: { reason: cancelOptions.reason } })).data),
      waitForEnd: async (id, waitOptions = {}) => {
        const timeoutMs = waitOptions.timeoutMs ?? 60_000;
        const giveUpAt = Date.now() + timeoutMs;
        for (;;) {
          const request = withTrackingUrl((await call<RequestWithProgress>({ method: "GET", path: idPath(id) })).data);
          if (request.status !== "active") return request;
          if (Date.now() >= giveUpAt) throw new WaitTimedOutError(id, timeoutMs);
          await new Promise((resolve) => setTimeout(resolve, waitOptions.intervalMs ?? 500));
        }
      },
    },
    events: {
      send: async (name, key, payload, sendOptions = {}) =>
        (
          await call<SentEvent>({
            method: "POST",
            path: "/api/events",
            body: { name, key, payload: payload ?? null },
            headers: sendOptions.idempotencyKey === undefined ? {} : { "idempotency-key": sendOptions.idempotencyKey },
          })
        ).data,
    },
  };
}
