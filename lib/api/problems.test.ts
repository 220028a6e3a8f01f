/**
 * Problem codes are a published contract: clients key on `code` or on `type`, so a code once
 * published keeps its status for good, and retitling a problem changes neither. Every typed error
 * thrown below the edge reaches its own problem in toProblem, the one mapping to HTTP, and never
 * the generic conflict or a 500.
 */
import { describe, expect, test, vi } from "vitest";
import { AccountExistsError, InvalidCredentialsError, NotSignedInError, PermissionDeniedError, RateLimitedError, ScrapeTokenRequiredError } from "@/lib/auth/errors";
import {
  AuthorityLostError,
  CheckpointOrderError,
  IdempotencyKeyReusedError,
  InvalidWorkflowError,
  NoOpenLeaseError,
  NotFoundError,
  ReleaseRefusedError,
  TransitionInProgressError,
} from "@/lib/engine/errors";
import { LabDestinationError, LabUnavailableError, SignalRefusedError } from "@/lib/lab/errors";
import { InvalidMetricsRangeError } from "@/lib/metrics/errors";
import { ReviewConflictError } from "@/lib/review/errors";
import { toProblem } from "./http";
import { HttpProblem, PROBLEMS, problem } from "./problems";

/** Every problem type the API answered with when `type` was still derived from the title, and its status then. */
const PUBLISHED: Record<string, number> = {
  "invalid-request": 400,
  "invalid-json": 400,
  "invalid-encoding": 400,
  "payload-too-large": 413,
  "unsupported-media-type": 415,
  "method-not-allowed": 405,
  "not-found": 404,
  "too-many-requests": 429,
  unauthorized: 401,
  forbidden: 403,
  "invalid-credentials": 401,
  "account-exists": 409,
  "unknown-session": 403,
  "not-your-permit": 403,
  "invalid-workflow": 422,
  "idempotency-key-reused": 422,
  "authority-lost": 409,
  "checkpoint-out-of-order": 409,
  "release-refused": 409,
  "no-open-lease": 409,
  "transition-in-progress": 409,
  conflict: 409,
  "already-resolved": 409,
  "stale-version": 409,
  "not-awaiting-review": 409,
  "request-ended": 409,
  "invalid-range": 400,
  "session-stopped": 409,
  "other-host": 409,
  "not-a-worker": 409,
  "signal-refused": 409,
  "destination-unreachable": 502,
  "destination-refused": 502,
  "destination-answer-invalid": 502,
  "internal-error": 500,
};

describe("the problem catalogue", () => {
  test("keeps every published code with the status it was published with", () => {
    for (const [code, status] of Object.entries(PUBLISHED)) expect({ code, status: PROBLEMS[code as keyof typeof PROBLEMS]?.status }).toEqual({ code, status });
  });

  test("answers a body whose type is the code's URN, and whose fields extras cannot overwrite", async () => {
    const response = problem("no-open-lease", "step s holds no open lease", { code: "conflict", status: 200, stepId: "s" });
    expect(response.status).toBe(409);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toEqual({
      type: "urn:fenceline:problem:no-open-lease",
      code: "no-open-lease",
      title: PROBLEMS["no-open-lease"].title,
      status: 409,
      detail: "step s holds no open lease",
      stepId: "s",
    });
  });
});

const term = 7n;
const cases: [string, Error, { code: string; fields?: Record<string, unknown>; headers?: Record<string, string> }][] = [
  ["not found", new NotFoundError("step", "s1"), { code: "not-found", fields: { what: "step", id: "s1" } }],
  ["invalid workflow", new InvalidWorkflowError("no steps"), { code: "invalid-workflow" }],
  ["idempotency key reused", new IdempotencyKeyReusedError(), { code: "idempotency-key-reused" }],
  [
    "authority lost",
    new AuthorityLostError("commit_receipt", "s1", term, "superseded", 8n),
    { code: "authority-lost", fields: { operation: "commit_receipt", stepId: "s1", presentedTerm: "7", reason: "superseded", currentTerm: "8" } },
  ],
  ["checkpoint order", new CheckpointOrderError("begin_invocation", "s1"), { code: "checkpoint-out-of-order", fields: { operation: "begin_invocation", stepId: "s1" } }],
  ["release refused", new ReleaseRefusedError("s1", "invocation_began"), { code: "release-refused", fields: { stepId: "s1", checkpoint: "invocation_began" } }],
  ["no open lease", new NoOpenLeaseError("s1"), { code: "no-open-lease", fields: { stepId: "s1" } }],
  ["transition in progress", new TransitionInProgressError(), { code: "transition-in-progress" }],
  ["already resolved", new ReviewConflictError("already_resolved", "resolved by grace", { currentVersion: 2, resolvedBy: "grace" }), { code: "already-resolved", fields: { currentVersion: 2, resolvedBy: "grace" } }],
  ["stale version", new ReviewConflictError("stale_version", "reload it", { currentVersion: 3 }), { code: "stale-version", fields: { currentVersion: 3 } }],
  ["not awaiting review", new ReviewConflictError("not_awaiting_review", "completed", { currentVersion: 1 }), { code: "not-awaiting-review" }],
  ["request ended", new ReviewConflictError("request_ended", "cancelled", { currentVersion: 1 }), { code: "request-ended" }],
  ["invalid metrics range", new InvalidMetricsRangeError("`from` must be before `to`"), { code: "invalid-range" }],
  ["not signed in", new NotSignedInError(), { code: "unauthorized", headers: { "www-authenticate": 'Cookie realm="fenceline"' } }],
  ["scrape token required", new ScrapeTokenRequiredError(), { code: "unauthorized", headers: { "www-authenticate": 'Bearer realm="fenceline-metrics"' } }],
  ["permission denied", new PermissionDeniedError("needs the admin role"), { code: "forbidden" }],
  ["invalid credentials", new InvalidCredentialsError(), { code: "invalid-credentials" }],
  ["account exists", new AccountExistsError("a@example.test"), { code: "account-exists" }],
  ["rate limited", new RateLimitedError("sign-in", 3), { code: "too-many-requests", headers: { "retry-after": "3" } }],
  ["lab outside demo mode", new LabUnavailableError(), { code: "not-found" }],
  ["session stopped", new SignalRefusedError("session_stopped", "stopped"), { code: "session-stopped" }],
  ["other host", new SignalRefusedError("other_host", "elsewhere"), { code: "other-host" }],
  ["not a worker", new SignalRefusedError("not_a_worker", "pid 1"), { code: "not-a-worker" }],
  ["signal failed", new SignalRefusedError("signal_failed", "EPERM"), { code: "signal-refused" }],
  ["destination unreachable", new LabDestinationError("unreachable", "ECONNREFUSED"), { code: "destination-unreachable" }],
  ["destination refused", new LabDestinationError("refused", "answered 500"), { code: "destination-refused" }],
  ["destination answer invalid", new LabDestinationError("invalid_answer", "out of schema"), { code: "destination-answer-invalid" }],
  ["a problem thrown at the edge", new HttpProblem("unknown-session", "not ours"), { code: "unknown-session" }],
];

describe("toProblem", () => {
  test.each(cases)("answers %s with its own problem code, status, fields and headers", async (_name, error, expected) => {
    const response = toProblem(error);
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(PROBLEMS[expected.code as keyof typeof PROBLEMS].status);
    expect(body).toMatchObject({ code: expected.code, type: `urn:fenceline:problem:${expected.code}`, detail: error.message, ...expected.fields });
    for (const [name, value] of Object.entries(expected.headers ?? {})) expect(response.headers.get(name)).toBe(value);
  });

  test("answers anything it does not know with a 500 that reveals nothing, and logs it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const failure = new Error("connection to 10.0.0.5 refused: password for user fenceline");
      const response = toProblem(failure);
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ code: "internal-error" });
      expect(logged).toHaveBeenCalledWith("[api] unexpected error:", failure);
    } finally {
      logged.mockRestore();
    }
  });
});
