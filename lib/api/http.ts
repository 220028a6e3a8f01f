/**
 * The HTTP edge, shared by every route handler: read and validate input with zod, shape output
 * through its schema, and turn every refusal into application/problem+json (RFC 9457). Route
 * handlers stay thin: `handle(async (request) => ...)` around a call into lib/.
 *
 * A bad request is always a 4xx that says what was wrong. Only a failure of our own (a bug, the
 * database gone) is a 5xx, and its body never leaks internals.
 */
import { z } from "zod";
import { FencelineError, InvalidWorkflowError, NotFoundError } from "@/lib/engine/errors";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";
/** Request bodies larger than this are refused before parsing. */
export const MAX_BODY_BYTES = 64 * 1024;

export type ProblemIssue = { readonly path: string; readonly message: string };

/** A refusal with its HTTP status; thrown anywhere below a route handler. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details" });

export function problem(status: number, title: string, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Response {
  const type = `urn:fenceline:problem:${title.toLowerCase().replaceAll(/[^a-z0-9]+/g, "-")}`;
  return new Response(JSON.stringify({ type, title, status, detail, ...extra }), {
    status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", ...headers },
  });
}

const issuesOf = (error: z.ZodError): ProblemIssue[] =>
  error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));

function describeIssues(where: string, issues: readonly ProblemIssue[]): string {
  return `${where}: ${issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join("; ")}`;
}

export function invalid(where: string, error: z.ZodError): HttpProblem {
  const issues = issuesOf(error);
  return new HttpProblem(400, "Invalid request", describeIssues(where, issues), { issues });
}

/** Reads a JSON body: refuses a wrong content type (415), an oversized body (413), bad JSON (400), a schema mismatch (400). */
export async function readJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(contentType)) {
    throw new HttpProblem(415, "Unsupported media type", `send the body as application/json (got ${contentType ? JSON.stringify(contentType) : "no content type"})`);
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await readLimited(request);
  let body: unknown;
  try {
    body = text.trim() === "" ? undefined : JSON.parse(text);
  } catch {
    throw new HttpProblem(400, "Invalid JSON", "the request body is not valid JSON");
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalid("body", parsed.error);
  return parsed.data;
}

async function readLimited(request: Request): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const text = new TextDecoder("utf-8", { fatal: true });
  try {
    return text.decode(Buffer.concat(chunks));
  } catch {
    throw new HttpProblem(400, "Invalid encoding", "the request body is not valid UTF-8");
  }
}

const tooLarge = () => new HttpProblem(413, "Payload too large", `the request body exceeds ${MAX_BODY_BYTES} bytes`);

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
  return parsed.data;
}

/** Validates route parameters (Next passes them as a promise). */
export async function readParams<S extends z.ZodType>(params: Promise<unknown>, schema: S): Promise<z.output<S>> {
  const parsed = schema.safeParse(await params);
  if (!parsed.success) throw new HttpProblem(404, "Not found", describeIssues("path", issuesOf(parsed.error)));
  return parsed.data;
}

/** Shapes a response through its schema: what leaves is what the OpenAPI document promises. */
export function json<S extends z.ZodType>(schema: S, data: z.input<S>, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return Response.json(schema.parse(data), { status: init.status ?? 200, headers: { "cache-control": "no-store", ...init.headers } });
}

/** Maps what lib/ throws to problem+json; anything unexpected is a 500 that reveals nothing. */
export function toProblem(error: unknown): Response {
  if (error instanceof HttpProblem) return problem(error.status, error.title, error.detail, error.extra, error.headers);
  if (error instanceof NotFoundError) return problem(404, "Not found", error.message);
  if (error instanceof InvalidWorkflowError) return problem(422, "Invalid workflow", error.message);
  if (error instanceof FencelineError) return problem(409, "Conflict", error.message, { code: error.code });
  console.error("[api] unexpected error:", error);
  return problem(500, "Internal error", "the request could not be completed; it was logged");
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
