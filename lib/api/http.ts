/**
 * The HTTP edge, shared by every route handler: read and validate input with zod, shape output
 * through its schema, and turn every refusal into application/problem+json (RFC 9457): below the
 * edge lib/ throws typed errors (FencelineError), and toProblem maps each to its problem code
 * (lib/api/problems.ts). Route handlers stay thin: `handle(async (request) => ...)` around a call
 * into lib/.
 *
 * A bad request is always a 4xx that says what was wrong. Only a failure of our own (a bug, the
 * database gone) is a 5xx, and its body never leaks internals.
 */
import { z } from "zod";
import { AccountExistsError, AppKeyRequiredError, InvalidCredentialsError, NotSignedInError, PermissionDeniedError, RateLimitedError, ScrapeTokenRequiredError } from "@/lib/auth/errors";
import {
  AuthorityLostError,
  CheckpointOrderError,
  DefinitionConflictError,
  FencelineError,
  IdempotencyKeyReusedError,
  InvalidDefinitionError,
  InvalidWaitError,
  InvalidInputError,
  InvalidWorkflowError,
  NoOpenLeaseError,
  NotFoundError,
  ReleaseRefusedError,
  RequestEndedError,
  TransitionInProgressError,
  UnknownKindError,
} from "@/lib/engine/errors";
import { EventKeyReusedError, UnknownEventError, WaitUrlGoneError } from "@/lib/events/errors";
import { LabDestinationError, LabUnavailableError, SignalRefusedError } from "@/lib/lab/errors";
import { InvalidMetricsRangeError } from "@/lib/metrics/errors";
import { ReviewConflictError } from "@/lib/review/errors";
import { InvalidScheduleError, ScheduleExistsError } from "@/lib/schedules/errors";
import { BulkPreviewStaleError } from "@/lib/requests/bulk/bulk";
import { RerunRefusedError, StaleRequestViewError } from "@/lib/requests/page/errors";
import { authorityLostFields } from "./contract/worker";
import { nulPathOf } from "./nul";
import { HttpProblem, problem, type ProblemCode } from "./problems";

/** Request bodies larger than this are refused before parsing. */
export const MAX_BODY_BYTES = 64 * 1024;

export type ProblemIssue = { readonly path: string; readonly message: string };

const issuesOf = (error: z.ZodError): ProblemIssue[] =>
  error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));

function describeIssues(where: string, issues: readonly ProblemIssue[]): string {
  return `${where}: ${issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ")}`;
}

export function invalid(where: string, error: z.ZodError): HttpProblem {
  const issues = issuesOf(error);
  return new HttpProblem("invalid-request", describeIssues(where, issues), { issues });
}

/** Reads a JSON body: refuses a wrong content type (415), an oversized body (413), bad JSON (400), a schema mismatch (400). */
export async function readJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  requireJsonContentType(request.headers.get("content-type"));
  return parseJsonBody(await readLimitedBody(request), schema);
}

/** Refuses (415) a body that is not declared as JSON. */
export function requireJsonContentType(contentType: string | null | undefined): void {
  if (!/^application\/(.+\+)?json\b/i.test(contentType ?? "")) {
    throw new HttpProblem("unsupported-media-type", `send the body as application/json (got ${contentType ? JSON.stringify(contentType) : "no content type"})`);
  }
}

/**
 * Decodes and validates a JSON body already read (at most MAX_BODY_BYTES): refuses bad UTF-8,
 * bad JSON and a schema mismatch (400). An empty body is `undefined` to the schema.
 */
export function parseJsonBody<S extends z.ZodType>(bytes: Uint8Array, schema: S): z.output<S> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpProblem("invalid-encoding", "the request body is not valid UTF-8");
  }
  let body: unknown;
  try {
    body = text.trim() === "" ? undefined : JSON.parse(text);
  } catch {
    throw new HttpProblem("invalid-json", "the request body is not valid JSON");
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalid("body", parsed.error);
  refuseNul("body", body);
  return parsed.data;
}

/**
 * Refuses input the schema let through that holds U+0000 anywhere. It runs after the schema, so a
 * field whose own rule refuses the character says so in its words; the issue's path has the
 * schema's shape.
 */
function refuseNul(where: string, raw: unknown): void {
  const at = nulPathOf(raw);
  if (at === null) return;
  const issues = [{ path: at, message: "holds a NUL character (U+0000), which cannot be stored" }];
  throw new HttpProblem("invalid-request", describeIssues(where, issues), { issues });
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body's bytes, or null once it exceeds MAX_BODY_BYTES (the rest is not read). */
async function readBodyBytes(request: Request): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A request body as bytes for parseJsonBody; refuses (413) one declared or found larger than MAX_BODY_BYTES. */
export async function readLimitedBody(request: Request): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await readBodyBytes(request);
  if (bytes === null) throw tooLarge();
  return bytes;
}

/** The 413 problem of a body larger than MAX_BODY_BYTES. */
export const tooLarge = () => new HttpProblem("payload-too-large", `the request body exceeds ${MAX_BODY_BYTES} bytes`);

/** Validates the query string; repeated keys arrive as arrays. */
export function readQuery<S extends z.ZodType>(request: Request, schema: S): z.output<S> {
  const params = new URL(request.url).searchParams;
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    raw[key] = values.length === 1 ? values[0]! : values;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid("query", parsed.error);
  refuseNul("query", raw);
  return parsed.data;
}

/** Validates route parameters (Next passes them as a promise). */
export async function readParams<S extends z.ZodType>(params: Promise<unknown>, schema: S): Promise<z.output<S>> {
  const raw = await params;
  const nul = nulPathOf(raw);
  if (nul !== null) throw new HttpProblem("not-found", describeIssues("path", [{ path: nul, message: "holds a NUL character (U+0000)" }]));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HttpProblem("not-found", describeIssues("path", issuesOf(parsed.error)));
  return parsed.data;
}

/** Shapes a response through its schema: what leaves is what the OpenAPI document promises. */
export function json<S extends z.ZodType>(schema: S, data: z.input<S>, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return Response.json(schema.parse(data), { status: init.status ?? 200, headers: { "cache-control": "no-store", ...init.headers } });
}

const REVIEW_CONFLICTS = {
  already_resolved: "already-resolved",
  already_taken: "already-taken",
  stale_version: "stale-version",
  not_awaiting_review: "not-awaiting-review",
  request_ended: "request-ended",
} as const satisfies Record<ReviewConflictError["conflict"], ProblemCode>;

const SIGNAL_REFUSALS = {
  session_stopped: "session-stopped",
  other_host: "other-host",
  not_a_worker: "not-a-worker",
  signal_failed: "signal-refused",
} as const satisfies Record<SignalRefusedError["refusal"], ProblemCode>;

const DESTINATION_FAILURES = {
  unreachable: "destination-unreachable",
  refused: "destination-refused",
  invalid_answer: "destination-answer-invalid",
} as const satisfies Record<LabDestinationError["failure"], ProblemCode>;

/** The problem each typed error is answered with, and the error's fields a client may read. */
function problemOf(error: FencelineError): HttpProblem {
  if (error instanceof NotFoundError) return new HttpProblem("not-found", error.message, { what: error.what, id: error.id });
  if (error instanceof InvalidWorkflowError) return new HttpProblem("invalid-workflow", error.message);
  if (error instanceof IdempotencyKeyReusedError) return new HttpProblem("idempotency-key-reused", error.message);
  if (error instanceof InvalidInputError) return new HttpProblem("invalid-input", error.message, { issues: [...error.issues] });
  if (error instanceof UnknownKindError) {
    return new HttpProblem("unknown-kind", error.message, { kinds: error.known.map((known) => ({ kind: known.kind, versions: [...known.versions] })) });
  }
  if (error instanceof BulkPreviewStaleError) return new HttpProblem("bulk-preview-stale", error.message, { expected: error.expected, matched: error.matched });
  if (error instanceof StaleRequestViewError) return new HttpProblem("stale-request-view", error.message, { current: error.current });
  if (error instanceof RerunRefusedError) return new HttpProblem("rerun-refused", error.message, { why: error.why, current: error.current });
  if (error instanceof RequestEndedError) return new HttpProblem("request-ended", error.message, { requestStatus: error.status });
  if (error instanceof InvalidDefinitionError) return new HttpProblem("invalid-definition", error.message, { problems: [...error.problems] });
  if (error instanceof InvalidWaitError) return new HttpProblem("invalid-wait", error.message);
  if (error instanceof InvalidScheduleError) return new HttpProblem("invalid-request", error.message, { issues: [...error.issues] });
  if (error instanceof ScheduleExistsError) return new HttpProblem("conflict", error.message, { name: error.name });
  if (error instanceof UnknownEventError) return new HttpProblem("unknown-event", error.message, { issues: [{ path: "name", message: "no registered workflow step waits for an event of this name" }] });
  if (error instanceof EventKeyReusedError) return new HttpProblem("event-key-reused", error.message);
  if (error instanceof WaitUrlGoneError) return new HttpProblem("wait-url-gone", error.message);
  if (error instanceof DefinitionConflictError) {
    return new HttpProblem("definition-conflict", error.message, { subject: error.subject, differences: [...error.differences] });
  }
  if (error instanceof AuthorityLostError) return new HttpProblem("authority-lost", error.message, authorityLostFields(error));
  if (error instanceof CheckpointOrderError) return new HttpProblem("checkpoint-out-of-order", error.message, { operation: error.operation, stepId: error.stepId });
  if (error instanceof ReleaseRefusedError) return new HttpProblem("release-refused", error.message, { stepId: error.stepId, checkpoint: error.checkpoint });
  if (error instanceof NoOpenLeaseError) return new HttpProblem("no-open-lease", error.message, { stepId: error.stepId });
  if (error instanceof TransitionInProgressError) return new HttpProblem("transition-in-progress", error.message);
  if (error instanceof ReviewConflictError) return new HttpProblem(REVIEW_CONFLICTS[error.conflict], error.message, { ...error.details });
  if (error instanceof InvalidMetricsRangeError) return new HttpProblem("invalid-range", error.message);
  if (error instanceof NotSignedInError) return new HttpProblem("unauthorized", error.message, {}, { "www-authenticate": 'Cookie realm="fenceline"' });
  if (error instanceof AppKeyRequiredError) return new HttpProblem("unauthorized", error.message, {}, { "www-authenticate": 'Bearer realm="fenceline-app"' });
  if (error instanceof ScrapeTokenRequiredError) return new HttpProblem("unauthorized", error.message, {}, { "www-authenticate": 'Bearer realm="fenceline-metrics"' });
  if (error instanceof PermissionDeniedError) return new HttpProblem("forbidden", error.message);
  if (error instanceof InvalidCredentialsError) return new HttpProblem("invalid-credentials", error.message);
  if (error instanceof AccountExistsError) return new HttpProblem("account-exists", error.message);
  if (error instanceof RateLimitedError) return new HttpProblem("too-many-requests", error.message, {}, { "retry-after": String(error.retryAfterSeconds) });
  if (error instanceof LabUnavailableError) return new HttpProblem("not-found", error.message);
  if (error instanceof SignalRefusedError) return new HttpProblem(SIGNAL_REFUSALS[error.refusal], error.message);
  if (error instanceof LabDestinationError) return new HttpProblem(DESTINATION_FAILURES[error.failure], error.message);
  return new HttpProblem("conflict", error.message);
}

/** What lib/ throws, as the problem it is answered with; anything unexpected is logged and becomes a 500 that reveals nothing. */
export function problemFor(error: unknown): HttpProblem {
  const known = error instanceof FencelineError ? problemOf(error) : error instanceof HttpProblem ? error : null;
  if (known) return known;
  console.error("[api] unexpected error:", error);
  return new HttpProblem("internal-error", "the request could not be completed; it was logged");
}

/** Maps what lib/ throws to problem+json (problemFor). */
export function toProblem(error: unknown): Response {
  const known = problemFor(error);
  return problem(known.code, known.detail, known.extra, known.headers);
}

type RouteContext<P> = { params: Promise<P> };

/** Wraps a route handler so every refusal or failure becomes problem+json. */
export function handle<P = Record<string, never>>(work: (request: Request, context: RouteContext<P>) => Promise<Response>) {
  return async (request: Request, context: RouteContext<P>): Promise<Response> => {
    try {
      return await work(request, context);
    } catch (error) {
      return toProblem(error);
    }
  };
}
