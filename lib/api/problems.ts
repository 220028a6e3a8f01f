/**
 * Every refusal the API answers with, as application/problem+json (RFC 9457). A problem's `code`
 * is stable: clients key on it (or on `type`, which is `urn:fenceline:problem:<code>`), so a code
 * is never renamed or reused once published; its title may be reworded freely. The codes are the
 * slugs of the titles they were first published under.
 *
 * This catalogue is the one place that knows HTTP statuses: code → status and title.
 */
import { z } from "zod";

export const PROBLEMS = {
  // The request itself (lib/api/http.ts)
  "invalid-request": { status: 400, title: "Invalid request" },
  "invalid-json": { status: 400, title: "Invalid JSON" },
  "invalid-encoding": { status: 400, title: "Invalid encoding" },
  // A path segment Next cannot decode (proxy.ts)
  "unreadable-path": { status: 400, title: "Unreadable path" },
  "payload-too-large": { status: 413, title: "Payload too large" },
  "unsupported-media-type": { status: 415, title: "Unsupported media type" },
  "method-not-allowed": { status: 405, title: "Method not allowed" },
  "not-found": { status: 404, title: "Not found" },
  "too-many-requests": { status: 429, title: "Too many requests" },
  // Who is asking
  unauthorized: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  "invalid-credentials": { status: 401, title: "Invalid credentials" },
  "account-exists": { status: 409, title: "Account exists" },
  "unknown-session": { status: 403, title: "Unknown session" },
  "not-your-permit": { status: 403, title: "Not your permit" },
  // Requests, steps and the engine
  "invalid-workflow": { status: 422, title: "Invalid workflow" },
  "idempotency-key-reused": { status: 422, title: "Idempotency key reused" },
  "invalid-input": { status: 422, title: "Invalid input" },
  "unknown-kind": { status: 422, title: "Unknown kind" },
  "definition-conflict": { status: 409, title: "Definition conflict" },
  "invalid-definition": { status: 422, title: "Invalid definition" },
  "invalid-wait": { status: 422, title: "Invalid wait" },
  // Events (lib/events)
  "unknown-event": { status: 422, title: "Unknown event" },
  "event-key-reused": { status: 422, title: "Event key reused" },
  "wait-url-gone": { status: 410, title: "Wait URL gone" },
  "authority-lost": { status: 409, title: "Authority lost" },
  "checkpoint-out-of-order": { status: 409, title: "Checkpoint out of order" },
  "release-refused": { status: 409, title: "Release refused" },
  "no-open-lease": { status: 409, title: "No open lease" },
  "transition-in-progress": { status: 409, title: "Transition in progress" },
  conflict: { status: 409, title: "Conflict" },
  // Review cases
  "already-resolved": { status: 409, title: "Already resolved" },
  "already-taken": { status: 409, title: "Already taken" },
  "stale-version": { status: 409, title: "Stale version" },
  "not-awaiting-review": { status: 409, title: "Not awaiting review" },
  "request-ended": { status: 409, title: "Request ended" },
  // The request's page (lib/requests/page)
  "stale-request-view": { status: 409, title: "Stale request view" },
  "rerun-refused": { status: 409, title: "Rerun refused" },
  "bulk-preview-stale": { status: 409, title: "Bulk preview stale" },
  // Metrics
  "invalid-range": { status: 400, title: "Invalid range" },
  // The demo fault lab
  "session-stopped": { status: 409, title: "Session stopped" },
  "other-host": { status: 409, title: "Other host" },
  "not-a-worker": { status: 409, title: "Not a worker" },
  "signal-refused": { status: 409, title: "Signal refused" },
  "destination-unreachable": { status: 502, title: "Destination unreachable" },
  "destination-refused": { status: 502, title: "Destination refused" },
  "destination-answer-invalid": { status: 502, title: "Destination answer invalid" },
  // Our own failures: their bodies never reveal internals
  "internal-error": { status: 500, title: "Internal error" },
  "database-unavailable": { status: 503, title: "Database unavailable" },
  "dashboard-starting": { status: 503, title: "Dashboard starting" },
} as const satisfies Record<string, { readonly status: number; readonly title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;
export const PROBLEM_CODES = Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]];

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export const problemTypeOf = (code: ProblemCode): string => `urn:fenceline:problem:${code}`;

export const problemSchema = z
  .object({
    type: z.string().meta({ description: "urn:fenceline:problem:<code>" }),
    code: z.enum(PROBLEM_CODES).meta({ description: "Stable: never renamed once published, unlike the title" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details" });

/** A refusal with its problem code; thrown at the HTTP edge (lib/api, app/), answered by toProblem. */
export class HttpProblem extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  get status(): number {
    return PROBLEMS[this.code].status;
  }
}

/** A problem+json answer as status, headers and body text, for servers that write it themselves (lib/api/worker-protocol.ts). */
export type ProblemAnswer = { readonly status: number; readonly headers: Record<string, string>; readonly body: string };

/** The problem+json answer for `code`; `extra` fields sit beside type, code, title, status and detail. */
export function problemAnswer(code: ProblemCode, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): ProblemAnswer {
  const { status, title } = PROBLEMS[code];
  return {
    status,
    headers: { "content-type": PROBLEM_CONTENT_TYPE, "cache-control": "no-store", ...headers },
    body: JSON.stringify({ ...extra, type: problemTypeOf(code), code, title, status, detail }),
  };
}

/** The problem+json response for `code` (problemAnswer as a Fetch Response). */
export function problem(code: ProblemCode, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Response {
  const answer = problemAnswer(code, detail, extra, headers);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
