/**
 * The app's client: create, read, list and cancel the app's requests over Fenceline's HTTP API
 * with an app key. It uses `fetch` and `@opentelemetry/api` and nothing else, so it runs in any
 * backend (Node, edge runtimes) without pulling in worker or server code. Called inside a span of
 * the app's own tracing, `requests.create` and `events.send` send its W3C `traceparent`: the
 * request's spans become children of that span (with no tracing in the app, nothing is sent).
 * Workflow types cross by `import type`: a client bound once, `createClient<typeof workflows>(…)`,
 * checks every `requests.create(kind, input)` against the workflow of that kind at compile time
 * (an unknown kind does not compile), and the workflows' code is never loaded.
 */
import { context } from "@opentelemetry/api";
import type { WorkflowDefinition, WorkflowInput } from "@/lib/definitions/workflow";
import type { ScheduleOptions } from "@/lib/definitions/schedule";
import type { SentEvent } from "@/lib/events/types";
import type { CompensationView } from "@/lib/compensation/types";
import type { ScheduleView } from "@/lib/schedules/types";
import type { RequestRecord, RequestStatus, RequestWithProgress, RequestWithSteps } from "@/lib/requests/types";
import { traceHeadersOf } from "@/lib/telemetry/trace-context";
import { errorOf, FencelineConnectionError, WaitTimedOutError } from "./errors";

/** How {@link createClient} reaches Fenceline and authenticates. */
export type ClientOptions = {
  /** Fenceline's base URL, e.g. `process.env.FENCELINE_URL` (`http://127.0.0.1:3000`). */
  readonly url: string;
  /** An app key (`fl_app_…`) with the scopes the calls need: `requests:create`, `requests:read`, `events:send`, `schedules:manage`. */
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

/** A request just cancelled, with what will be undone: null when its workflow undoes nothing on cancel. */
export type CancelledRequest = RequestDetail & { readonly compensation: CompensationView | null };

const ONGOING: readonly string[] = ["active", "cancelling", "failing"];

/** A request with its steps' evidence: `requests.get(id, { include: ["steps"] })`. */
export type RequestWithEvidence = RequestWithSteps & { readonly trackingUrl: string };

/** Options of `requests.get`. */
export type GetOptions = {
  /**
   * `["steps"]`: add each step with its receipt (verification method, external reference,
   * observed result) and open review cases. Needs the `requests:evidence` scope.
   */
  readonly include?: readonly "steps"[];
};

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

/**
 * The workflows a client is bound to, as `createClient<typeof workflows>` takes them: one
 * definition, an array or tuple of them, or an object of them (`{ order, refund }`).
 */
export type WorkflowSet = AnyWorkflow | readonly AnyWorkflow[] | { readonly [name: string]: AnyWorkflow };

/** The workflow definitions of a {@link WorkflowSet}, as one union. */
export type WorkflowsOf<Set extends WorkflowSet> = Set extends AnyWorkflow
  ? Set
  : Set extends readonly AnyWorkflow[]
    ? Set[number]
    : Set extends { readonly [name: string]: AnyWorkflow }
      ? Set[keyof Set]
      : never;

/** The kinds a client bound to `Set` may start. */
export type KindOf<Set extends WorkflowSet> = WorkflowsOf<Set>["kind"];

/** The input of the bound workflow of kind `Kind`. */
export type InputOf<Set extends WorkflowSet, Kind extends string> = WorkflowInput<Extract<WorkflowsOf<Set>, { readonly kind: Kind }>>;

/** Options of `events.send`. */
export type SendEventOptions = {
  /**
   * Makes the send repeatable: the same key returns the event it first sent (so a send whose
   * answer was lost can be sent again); the same key with another name, key or payload is refused
   * with ConflictError. Keys are per app. Use one per fact, e.g. `confirmed-<order id>`.
   */
  readonly idempotencyKey?: string;
};

/** A schedule as Fenceline keeps it: its definition, state, next 5 due times and last firings with their requests. */
export type ScheduleRecord = ScheduleView;

/** One page of the app's schedules, by name; pass `nextCursor` as `after` for the next (null on the last page). */
export type ScheduleList = { readonly items: readonly ScheduleRecord[]; readonly nextCursor: string | null };

/**
 * What {@link createClient} returns: the app's requests, events and schedules, through its app key.
 * Bound to the app's workflows (`createClient<typeof workflows>`), `requests.create` takes only
 * their kinds, each with its own input type.
 */
export type FencelineClient<Set extends WorkflowSet = AnyWorkflow> = {
  readonly requests: {
    /**
     * Creates a request of a registered workflow kind. Throws InvalidInputError (with the
     * fields), UnknownKindError, ConflictError, RateLimitedError, UnauthorizedError, or
     * FencelineConnectionError when the outcome is unknown (repeat it with the same key).
     *
     * On a bound client, `kind` is one of the bound workflows' kinds and `input` that workflow's
     * input: `requests.create("order", { orderId: "o-1" })`. A kind the client is not bound to
     * does not compile.
     */
    create<const Kind extends KindOf<Set>>(kind: Kind, input: InputOf<Set, Kind>, options?: CreateOptions): Promise<CreatedRequest>;
    /**
     * The same, with the workflow named at the call (`create<typeof checkout>("checkout", input)`),
     * for a client that is not bound to its workflows.
     */
    create<W extends WorkflowsOf<Set> = WorkflowsOf<Set>>(kind: W["kind"], input: WorkflowInput<W>, options?: CreateOptions): Promise<CreatedRequest>;
    /**
     * The request's status and end-user projection, and with `{ include: ["steps"] }` its steps'
     * evidence: each step's receipt (how it was verified, the destination's external reference,
     * the observed result) and its open review cases, e.g. to show a customer their refund
     * reference. Throws NotFoundError for another app's request, UnauthorizedError (403) when the
     * key lacks `requests:evidence` for the steps.
     */
    get(id: string, options: { readonly include: readonly ["steps"] }): Promise<RequestWithEvidence>;
    /** The request's status and end-user projection (no `include`). Throws NotFoundError for another app's request. */
    get(id: string, options?: GetOptions): Promise<RequestDetail>;
    /** The app's requests, newest first, a page at a time. */
    list(options?: ListOptions): Promise<RequestList>;
    /**
     * Cancels the request; running steps see it at their next checkpoint. For a workflow that
     * undoes on cancel (`compensateOn`), the answer's `compensation` says what will be undone and
     * what was not (its `state` is `waiting` while a step is still in flight or in review); the
     * request reads `cancelling` until every undo has its receipt. Throws ConflictError when it
     * already ended or was already cancelled.
     */
    cancel(id: string, options?: { readonly reason?: string }): Promise<CancelledRequest>;
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
  /** The app's schedules (an app key with `schedules:manage`): requests of a kind started by the clock. Every change is audited. */
  readonly schedules: {
    /**
     * Creates a schedule, e.g. one from `defineSchedule` next to its workflow, at start. Idempotent
     * by name: the same definition again returns the same schedule (`created: false`); another
     * definition under the name throws ConflictError. Throws InvalidInputError naming the field
     * for a cron that does not parse, a zone that does not exist, an unknown kind or version, or
     * an input the kind refuses.
     */
    create(schedule: ScheduleOptions): Promise<ScheduleRecord & { readonly created: boolean }>;
    /** The app's schedules by name, a page at a time. */
    list(options?: { readonly after?: string; readonly limit?: number }): Promise<ScheduleList>;
    /** One schedule with its next 5 due times and last firings. Throws NotFoundError. */
    get(name: string): Promise<ScheduleRecord>;
    /** Pauses it: nothing falls due until it is resumed (a queued firing is dropped). */
    pause(name: string, options?: { readonly reason?: string }): Promise<ScheduleRecord>;
    /** Resumes it from its next due time after now: what fell due while paused is not started. */
    resume(name: string, options?: { readonly reason?: string }): Promise<ScheduleRecord>;
    /** Deletes it and its firings; the requests it started stay. */
    delete(name: string, options?: { readonly reason?: string }): Promise<void>;
  };
};

type Call = { readonly method: "GET" | "POST" | "DELETE"; readonly path: string; readonly body?: unknown; readonly headers?: Record<string, string> };

/**
 * A client for the app's requests.
 *
 * @example
 * ```ts
 * import { createClient } from "fenceline/client";
 * import type { checkout } from "./workflows";
 *
 * // Bound once to the app's workflows: every create is checked against them.
 * const fenceline = createClient<typeof checkout>({ url: process.env.FENCELINE_URL!, apiKey: process.env.FENCELINE_API_KEY! });
 * const request = await fenceline.requests.create("checkout", { orderId: "o-1", amountCents: 1200 }, { idempotencyKey: "order-o-1" });
 * console.log(request.trackingUrl);
 * ```
 */
export function createClient<Set extends WorkflowSet = AnyWorkflow>(options: ClientOptions): FencelineClient<Set> {
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
  const schedulePath = (name: string) => `/api/schedules/${encodeURIComponent(name)}`;

  return {
    requests: {
      create: async (kind: string, input: unknown, createOptions: CreateOptions = {}) => {
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
          headers: { ...traceHeadersOf(context.active()), ...(createOptions.idempotencyKey === undefined ? {} : { "idempotency-key": createOptions.idempotencyKey }) },
        });
        return { ...withTrackingUrl(data), created: status === 201 };
      },
      get: async (id: string, getOptions: GetOptions = {}): Promise<never> => {
        const include = getOptions.include?.includes("steps") ? "?include=steps" : "";
        return withTrackingUrl((await call<RequestWithProgress>({ method: "GET", path: `${idPath(id)}${include}` })).data) as never;
      },
      list: async (listOptions = {}) => {
        const query = new URLSearchParams();
        for (const [key, value] of Object.entries(listOptions)) if (value !== undefined) query.set(key, String(value));
        const { data } = await call<{ items: RequestRecord[]; nextCursor: string | null }>({ method: "GET", path: `/api/requests${query.size > 0 ? `?${query}` : ""}` });
        return { items: data.items.map(withTrackingUrl), nextCursor: data.nextCursor };
      },
      cancel: async (id, cancelOptions = {}) =>
        withTrackingUrl((await call<RequestWithProgress & { compensation: CompensationView | null }>({ method: "POST", path: `${idPath(id)}/cancel`, body: { reason: cancelOptions.reason } })).data),
      waitForEnd: async (id, waitOptions = {}) => {
        const timeoutMs = waitOptions.timeoutMs ?? 60_000;
        const giveUpAt = Date.now() + timeoutMs;
        for (;;) {
          const request = withTrackingUrl((await call<RequestWithProgress>({ method: "GET", path: idPath(id) })).data);
          // A request being undone (cancelling, failing) has not ended yet.
          if (!ONGOING.includes(request.status)) return request;
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
            headers: { ...traceHeadersOf(context.active()), ...(sendOptions.idempotencyKey === undefined ? {} : { "idempotency-key": sendOptions.idempotencyKey }) },
          })
        ).data,
    },
    schedules: {
      create: async (schedule) => {
        const { status, data } = await call<ScheduleRecord>({ method: "POST", path: "/api/schedules", body: schedule });
        return { ...data, created: status === 201 };
      },
      list: async (listOptions = {}) => {
        const query = new URLSearchParams();
        for (const [key, value] of Object.entries(listOptions)) if (value !== undefined) query.set(key, String(value));
        return (await call<ScheduleList>({ method: "GET", path: `/api/schedules${query.size > 0 ? `?${query}` : ""}` })).data;
      },
      get: async (name) => (await call<ScheduleRecord>({ method: "GET", path: schedulePath(name) })).data,
      pause: async (name, changeOptions = {}) => (await call<ScheduleRecord>({ method: "POST", path: `${schedulePath(name)}/pause`, body: { reason: changeOptions.reason } })).data,
      resume: async (name, changeOptions = {}) => (await call<ScheduleRecord>({ method: "POST", path: `${schedulePath(name)}/resume`, body: { reason: changeOptions.reason } })).data,
      delete: async (name, changeOptions = {}) => {
        await call({ method: "DELETE", path: schedulePath(name), body: { reason: changeOptions.reason } });
      },
    },
  };
}
