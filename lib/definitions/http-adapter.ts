/**
 * An adapter for an HTTP API, built from a description of the request instead of hand-written
 * `invoke` code. It sends the step's request identity where the API expects it, bounds each
 * call by the adapter's timeout, and turns what came back into what Fenceline may conclude,
 * following one table (every row can be replaced):
 *
 *   row          when                                      default conclusion
 *   success      2xx                                       effect present, reference extracted
 *   conflict     409                                       stale term when the body names one,
 *                                                          else definite failure (nothing applied)
 *   rateLimited  429; 503 with Retry-After                 wait without a lease (Retry-After, else 1 s)
 *   clientError  any other 4xx                             definite failure (nothing applied)
 *   serverError  5xx                                       definite failure if `serverErrorsApplyNothing`,
 *                                                          else outcome unknown
 *   unexpected   1xx, 3xx (redirects are not followed)     outcome unknown
 *   noAnswer     timeout or dropped connection once sent   outcome unknown
 *   notSent      the connection was refused or the host    definite failure: nothing reached the API
 *                did not resolve
 *
 * Status queries (for `statusQuery: true`) follow their own small table: 2xx is applied with the
 * extracted reference, 404 is not found, anything else leaves the question open.
 */
import { DefiniteFailure, DestinationCallError, RateLimited, StaleTermRejected, UnknownOutcome } from "@/lib/adapters/call-outcome";
import { defineAdapter, type AdapterAnswer, type AdapterCall, type AdapterDefinition, type AdapterOptions, type AdapterPromises, type AdapterStatusAnswer, type AdapterStatusQuery, type ReviewHint } from "./adapter";
import { DefinitionError } from "./errors";

/** What came back from the API: its status, headers and body (parsed when it is JSON, else the text). */
export type HttpAnswer = {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON value for a JSON content type, the text otherwise, null when empty. */
  readonly body: unknown;
};

/** What a row concludes: the API's answer as an effect, or the call outcome to throw. */
export type HttpConclusion = AdapterAnswer | DestinationCallError;

/** A row of the classification table: an answer of the API, and the call it answers. */
export type HttpRow<Payload> = (answer: HttpAnswer, call: AdapterCall<Payload>) => HttpConclusion;

/** The call got no answer: timed out, aborted, or lost its connection after being sent; or never sent at all. */
export type HttpFailure = { readonly reason: "timeout" | "aborted" | "connection lost" | "not sent"; readonly cause: unknown };

/** The classification table of {@link httpAdapter}, row by row; give any subset to replace those rows. */
export type HttpClassification<Payload> = {
  /** 2xx. */
  readonly success: HttpRow<Payload>;
  /** 409. */
  readonly conflict: HttpRow<Payload>;
  /** 429, and 503 with Retry-After. */
  readonly rateLimited: HttpRow<Payload>;
  /** Any other 4xx. */
  readonly clientError: HttpRow<Payload>;
  /** 5xx (a 503 with Retry-After is `rateLimited`). */
  readonly serverError: HttpRow<Payload>;
  /** 1xx and 3xx: redirects are not followed, since a repeated request may repeat the effect. */
  readonly unexpected: HttpRow<Payload>;
  /** Timed out, aborted or dropped after the request was sent. */
  readonly noAnswer: (failure: HttpFailure, call: AdapterCall<Payload>) => HttpConclusion;
  /** Connection refused or host unknown: nothing was sent. */
  readonly notSent: (failure: HttpFailure, call: AdapterCall<Payload>) => HttpConclusion;
};

/** Where the step's request identity goes: a header (such as `Idempotency-Key`) or a query parameter. */
export type HttpIdentityPlacement = { readonly header: string } | { readonly query: string };

/** How to ask the API what became of a request identity. */
export type HttpStatusQuery = {
  /** The URL to GET for the identity (or `{ method, url, headers }`). */
  readonly request: (requestIdentity: string) => string | { readonly method?: string; readonly url: string; readonly headers?: Record<string, string> };
  /** Replaces the default reading: 2xx applied (with the extracted reference), 404 not found, anything else unknown. */
  readonly classify?: (answer: HttpAnswer, requestIdentity: string) => AdapterStatusAnswer | DestinationCallError;
};

/** What {@link httpAdapter} takes: the adapter's name, promises and limits, and the request to make. */
export type HttpAdapterOptions<Payload> = {
  readonly name: string;
  readonly version: string;
  readonly contract: AdapterPromises;
  readonly timeoutMs: number;
  readonly concurrencyLimit: number;
  /** As in `defineAdapter`: calls per second the API allows, across every worker. */
  readonly rate?: AdapterOptions<Payload>["rate"];
  /** The request one step makes: its method (POST unless said), URL, headers and body (the step's payload as JSON unless said). */
  readonly request: {
    readonly method?: "POST" | "PUT" | "PATCH" | "DELETE" | "GET";
    /** The URL, or a function of the call (to put its epoch and fencing term in the path of a fenced API). */
    readonly url: string | ((call: AdapterCall<Payload>) => string);
    /** Headers sent with every call, or a function of the call. */
    readonly headers?: Record<string, string> | ((call: AdapterCall<Payload>) => Record<string, string>);
    /** A string is sent as it is; anything else as JSON. */
    readonly body?: (call: AdapterCall<Payload>) => unknown;
  };
  /**
   * Where the request identity goes. Defaults to the `Idempotency-Key` header when
   * `contract.idempotencyKeys` is true; required then, since a key the API never sees dedupes nothing.
   */
  readonly identity?: HttpIdentityPlacement;
  /**
   * The API's documentation promises that a 5xx applied nothing (it checks before acting, or
   * rolls back). Without that promise a 5xx is an unknown outcome. @defaultValue false
   */
  readonly serverErrorsApplyNothing?: boolean;
  /** The effect's reference at the API, from a 2xx answer. Defaults to the body's `id`, `externalReference` or `reference`. */
  readonly reference?: (answer: HttpAnswer) => string | null;
  /** Whether a 2xx answer replays an earlier identical request. Defaults to an `Idempotent-Replayed: true` header. */
  readonly replayed?: (answer: HttpAnswer) => boolean;
  /** Required exactly when `contract.statusQuery` is true. */
  readonly status?: HttpStatusQuery;
  /** Rows of the classification table to replace. */
  readonly classify?: Partial<HttpClassification<Payload>>;
  /** As in `defineAdapter`, for APIs that enforce fencing terms. */
  readonly epochAdminUrl?: string;
  /** As in `defineAdapter`: how support can check the API by hand when an outcome is unknown. */
  readonly review?: ReviewHint;
};

const DEFAULT_RETRY_AFTER_MS = 1_000;
// A connection that failed before any byte left: the API cannot have acted on it.
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

/** Retry-After is delta-seconds or an HTTP date. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const fieldOf = (body: unknown, name: string): unknown => (body !== null && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined);

function defaultReference(answer: HttpAnswer): string | null {
  for (const name of ["id", "externalReference", "reference"]) {
    const value = fieldOf(answer.body, name);
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number") return String(value);
  }
  return null;
}

const detailOf = (answer: HttpAnswer): string => {
  const detail = fieldOf(answer.body, "detail") ?? fieldOf(answer.body, "message") ?? fieldOf(answer.body, "error");
  if (typeof detail === "string") return detail.slice(0, 500);
  return typeof answer.body === "string" ? answer.body.slice(0, 500) : `HTTP ${answer.status}`;
};

const termOf = (value: unknown): bigint | null => (typeof value === "string" && /^\d+$/.test(value) ? BigInt(value) : typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : null);

/** A 409 body names a stale term when it carries the term it holds, or says so in its code or title. */
function namesStaleTerm(body: unknown): boolean {
  if (fieldOf(body, "currentTerm") !== undefined || fieldOf(body, "currentEpoch") !== undefined) return true;
  return ["code", "title", "type"].some((name) => {
    const value = fieldOf(body, name);
    return typeof value === "string" && /stale[\s_-]?term/i.test(value);
  });
}

/** The default table, for one adapter. */
function defaultTable<Payload>(options: HttpAdapterOptions<Payload>): HttpClassification<Payload> {
  const { name } = options;
  const reference = options.reference ?? defaultReference;
  const replayed = options.replayed ?? ((answer: HttpAnswer) => answer.headers.get("idempotent-replayed") === "true");
  return {
    success: (answer) => ({ externalReference: reference(answer), result: answer.body, replayed: replayed(answer) }),
    conflict: (answer) =>
      namesStaleTerm(answer.body)
        ? new StaleTermRejected(name, termOf(fieldOf(answer.body, "currentEpoch")), termOf(fieldOf(answer.body, "currentTerm")))
        : new DefiniteFailure(name, answer.status, detailOf(answer)),
    rateLimited: (answer) => new RateLimited(name, retryAfterMs(answer.headers.get("retry-after")) ?? DEFAULT_RETRY_AFTER_MS),
    clientError: (answer) => new DefiniteFailure(name, answer.status, detailOf(answer)),
    serverError: (answer) => (options.serverErrorsApplyNothing ? new DefiniteFailure(name, answer.status, detailOf(answer)) : new UnknownOutcome(name, "server error")),
    unexpected: () => new UnknownOutcome(name, "unreadable answer"),
    noAnswer: (failure) => new UnknownOutcome(name, failure.reason === "not sent" ? "connection lost" : failure.reason, { cause: failure.cause }),
    notSent: (failure) => new DefiniteFailure(name, 0, `nothing was sent: ${String((failure.cause as { message?: unknown })?.message ?? failure.cause)}`),
  };
}

/** Which row an answer falls in. */
export function rowOf(status: number, headers: Headers): Exclude<keyof HttpClassification<unknown>, "noAnswer" | "notSent"> {
  if (status >= 200 && status < 300) return "success";
  if (status === 409) return "conflict";
  if (status === 429 || (status === 503 && headers.has("retry-after"))) return "rateLimited";
  if (status >= 400 && status < 500) return "clientError";
  if (status >= 500 && status < 600) return "serverError";
  return "unexpected";
}

function notSent(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; errors?: { code?: unknown }[] } })?.cause;
  if (typeof cause?.code === "string" && NOT_SENT_CODES.has(cause.code)) return true;
  // Several addresses tried, each refused.
  return Array.isArray(cause?.errors) && cause.errors.length > 0 && cause.errors.every((each) => typeof each.code === "string" && NOT_SENT_CODES.has(each.code));
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "" || !/^application\/(.+\+)?json\b/i.test(response.headers.get("content-type") ?? "")) return text === "" ? null : text;
  try {
    return JSON.parse(text);
  } catch {
    // Still an answer: its status says what happened; the body is kept as it came.
    return text;
  }
}

type Exchange = { kind: "answer"; answer: HttpAnswer } | { kind: "failure"; failure: HttpFailure };

/**
 * One request under the caller's signal and the adapter's timeout. A signal that already fired
 * throws its reason before anything is sent; once under way, every failure to read a whole
 * answer is a failure of the exchange.
 */
async function exchange(url: string, init: RequestInit, signal: AbortSignal, timeoutMs: number): Promise<Exchange> {
  signal.throwIfAborted();
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.any([signal, timeout]) });
    return { kind: "answer", answer: { status: response.status, headers: response.headers, body: await bodyOf(response) } };
  } catch (error) {
    const reason = timeout.aborted ? "timeout" : signal.aborted ? "aborted" : notSent(error) ? "not sent" : "connection lost";
    return { kind: "failure", failure: { reason, cause: error } };
  }
}

function conclude(conclusion: HttpConclusion): AdapterAnswer {
  if (conclusion instanceof Error) throw conclusion;
  return conclusion;
}

function problemsOf<Payload>(options: HttpAdapterOptions<Payload>): string[] {
  const problems: string[] = [];
  if (options.identity !== undefined) {
    const where = "header" in options.identity ? options.identity.header : options.identity.query;
    if (typeof where !== "string" || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(where)) problems.push(`identity must name a header or query parameter, got ${JSON.stringify(where)}`);
  }
  if (options.contract.statusQuery && options.status === undefined) problems.push("contract.statusQuery is true, so status (how to ask about an identity) is required");
  if (!options.contract.statusQuery && options.status !== undefined) problems.push("status is given but contract.statusQuery is false: say which is true");
  if (typeof options.request?.url !== "string" && typeof options.request?.url !== "function") problems.push("request.url must be a URL or a function of the call");
  if (typeof options.request?.url === "string" && !URL.canParse(options.request.url)) problems.push(`request.url is not a URL: ${JSON.stringify(options.request.url)}`);
  return problems;
}

/**
 * Defines an adapter for an HTTP API from a description of its request. It sends the step's
 * request identity (as `Idempotency-Key` unless `identity` says otherwise), limits each call to
 * `timeoutMs`, never follows a redirect, and classifies the answer by the table in this
 * module's header (2xx effect, 409 stale term, 429/503 wait, other 4xx definite failure, 5xx
 * unknown unless `serverErrorsApplyNothing`, no answer unknown). Replace any row with `classify`.
 * Throws a {@link DefinitionError} naming every problem.
 *
 * @example
 * ```ts
 * export const payments = httpAdapter<{ orderId: string; amountCents: number }>({
 *   name: "payments", version: "1",
 *   contract: { idempotencyKeys: true, statusQuery: false, fenceEnforcement: false, repetition: "idempotency_protected" },
 *   timeoutMs: 5_000, concurrencyLimit: 8,
 *   request: { url: "https://payments.example/charges", headers: { authorization: `Bearer ${process.env.PAYMENTS_KEY}` } },
 * });
 * ```
 */
export function httpAdapter<Payload = unknown>(options: HttpAdapterOptions<Payload>): AdapterDefinition<Payload> {
  const problems = problemsOf(options);
  if (problems.length > 0) throw new DefinitionError(`adapter ${options.name}@${options.version}`, problems);
  const table = { ...defaultTable(options), ...options.classify };
  const identity = options.identity ?? (options.contract.idempotencyKeys ? { header: "Idempotency-Key" } : undefined);
  const { request, status } = options;

  const invoke = async (call: AdapterCall<Payload>): Promise<AdapterAnswer> => {
    const url = new URL(typeof request.url === "function" ? request.url(call) : request.url);
    const headers = new Headers(typeof request.headers === "function" ? request.headers(call) : request.headers);
    // W3C trace context, so the destination's spans join the request's trace (none when untraced).
    for (const [name, value] of Object.entries(call.traceHeaders ?? {})) if (!headers.has(name)) headers.set(name, value);
    if (identity && "header" in identity) headers.set(identity.header, call.requestIdentity);
    if (identity && "query" in identity) url.searchParams.set(identity.query, call.requestIdentity);
    const method = request.method ?? "POST";
    let body: string | undefined;
    if (method !== "GET") {
      const value = request.body ? request.body(call) : call.payload;
      body = typeof value === "string" ? value : JSON.stringify(value ?? null);
      if (typeof value !== "string" && !headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const result = await exchange(url.toString(), { method, headers, body }, call.signal, call.timeoutMs);
    if (result.kind === "failure") return conclude((result.failure.reason === "not sent" ? table.notSent : table.noAnswer)(result.failure, call));
    return conclude(table[rowOf(result.answer.status, result.answer.headers)](result.answer, call));
  };

  const reference = options.reference ?? defaultReference;
  const query = status
    ? async ({ requestIdentity, signal, timeoutMs, traceHeaders }: AdapterStatusQuery): Promise<AdapterStatusAnswer> => {
        const described = status.request(requestIdentity);
        const { method = "GET", url, headers } = typeof described === "string" ? { url: described } : described;
        const result = await exchange(url, { method, headers: { ...traceHeaders, ...headers } }, signal, timeoutMs);
        if (result.kind === "failure") throw new UnknownOutcome(options.name, result.failure.reason === "not sent" ? "connection lost" : result.failure.reason, { cause: result.failure.cause });
        const { answer } = result;
        const classified = status.classify
          ? status.classify(answer, requestIdentity)
          : answer.status === 404
            ? ({ status: "not_found", result: answer.body } as const)
            : answer.status >= 200 && answer.status < 300 && reference(answer) !== null
              ? ({ status: "applied", externalReference: reference(answer)!, result: answer.body } as const)
              : new UnknownOutcome(options.name, answer.status >= 500 ? "server error" : "unreadable answer");
        if (classified instanceof Error) throw classified;
        return classified;
      }
    : undefined;

  return defineAdapter<Payload>({
    name: options.name,
    version: options.version,
    contract: options.contract,
    timeoutMs: options.timeoutMs,
    concurrencyLimit: options.concurrencyLimit,
    ...(options.rate !== undefined ? { rate: options.rate } : {}),
    invoke,
    ...(query ? { query } : {}),
    ...(options.epochAdminUrl !== undefined ? { epochAdminUrl: options.epochAdminUrl } : {}),
    ...(options.review !== undefined ? { review: options.review } : {}),
  });
}
