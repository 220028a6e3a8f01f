/**
 * A person settles an unknown outcome, and the record shows who, when, what and why. Each
 * resolution is one guarded transition: a stale version or a second resolver changes nothing,
 * and repeating the same resolution never writes a second receipt.
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { claimSteps } from "@/lib/engine/lease";
import { DELIVERY_SERVED } from "@/lib/requests/test-support";
import { registerSession } from "@/lib/engine/session";
import { cancelWorkflow } from "@/lib/engine/workflow";
import { trackingViewByToken } from "@/lib/projection/read";
import { reviewCaseDetail } from "./case";
import { ReviewConflictError } from "./errors";
import { resolveReviewCase } from "./resolve";
import { caseUnderReview } from "./test-support";

const stepRow = async (pool: import("pg").Pool, stepId: string) =>
  (await pool.query("SELECT state, next_mode, attempt_budget, attempts_started, pending_dependencies FROM step WHERE id = $1", [stepId])).rows[0];
const caseRow = async (pool: import("pg").Pool, caseId: string) =>
  (await pool.query("SELECT status, resolution, resolved_by, resolved_at, resolution_note, external_reference, version FROM review_case WHERE id = $1", [caseId])).rows[0];

describe("confirm delivered", () => {
  test("writes one manual-review receipt with the reference, completes the step and releases its dependant", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    expect((await trackingViewByToken(db.pool, review.trackingToken))!.headline.label).toBe("Delivery status needs review");

    const result = await resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_delivered", version: review.version, externalReference: "opq_123", note: "seen in their console" }, "grace");
    expect(result).toMatchObject({ resolution: "confirm_delivered", resolvedBy: "grace", replayed: false, version: review.version + 1 });

    const { rows: receipts } = await db.pool.query("SELECT verification_method, external_reference, request_identity FROM receipt WHERE step_id = $1", [review.stepIds.deliver]);
    expect(receipts).toEqual([{ verification_method: "manual_review", external_reference: "opq_123", request_identity: `fl-${review.stepIds.deliver}` }]);
    expect(await stepRow(db.pool, review.stepIds.deliver!)).toMatchObject({ state: "completed" });
    expect(await stepRow(db.pool, review.stepIds.notify!)).toMatchObject({ state: "ready", pending_dependencies: 0 });
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({
      status: "resolved", resolution: "confirm_delivered", resolved_by: "grace", resolution_note: "seen in their console", external_reference: "opq_123",
    });
    expect((await trackingViewByToken(db.pool, review.trackingToken))!.headline.label).toBe("Waiting on an external service");
  });

  test("without an external reference, the note saying how it was confirmed is required, and the receipt records it as such", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const { resolutionBody } = await import("@/lib/api/contract/support");
    const bare = resolutionBody.safeParse({ resolution: "confirm_delivered", version: review.version, note: "  " });
    expect(bare.success).toBe(false);
    expect(bare.error?.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      ["note", "without an external reference, say how you confirmed delivery: it is recorded in the receipt"],
    ]);
    const body = resolutionBody.parse({ resolution: "confirm_delivered", version: review.version, externalReference: "", note: "the customer sent a photo of the parcel" });
    await resolveReviewCase(db.pool, review.caseId, body, "grace");
    const { rows: receipts } = await db.pool.query("SELECT verification_method, external_reference, observed_result FROM receipt WHERE step_id = $1", [review.stepIds.deliver]);
    expect(receipts).toEqual([
      {
        verification_method: "manual_review",
        external_reference: null,
        observed_result: { confirmedBy: "grace", reviewCaseId: review.caseId, note: "the customer sent a photo of the parcel", confirmedWithoutReference: true, howConfirmed: "the customer sent a photo of the parcel" },
      },
    ]);
    expect(await stepRow(db.pool, review.stepIds.deliver!)).toMatchObject({ state: "completed" });
    // The same decision again is a replay, not a conflict.
    expect(await resolveReviewCase(db.pool, review.caseId, body, "grace")).toMatchObject({ replayed: true });
    // The service holds the rule too, whoever calls it (the test kit, a script): nothing is written.
    const other = await caseUnderReview(db.pool, "kay@example.test");
    await expect(resolveReviewCase(db.pool, other.caseId, { resolution: "confirm_delivered", version: other.version, externalReference: undefined, note: " " }, "grace")).rejects.toThrow(/say how you confirmed delivery/);
    expect(await caseRow(db.pool, other.caseId)).toMatchObject({ status: "open" });
  });

  test("the case shows how to check the destination by hand, as its adapter declared it, with this request's identity", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const { destination, step } = await reviewCaseDetail(db, review.caseId);
    expect(destination.howToCheck).toEqual({
      url: expect.stringMatching(new RegExp(`/admin/audit\\?requestIdentity=${encodeURIComponent(step.requestIdentity!)}$`)),
      instructions: expect.stringContaining("effect audit"),
    });
  });

  test("repeating the same resolution is a replay: nothing changes, still one receipt", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const body = { resolution: "confirm_delivered", version: review.version, externalReference: "opq_9", note: "" } as const;
    await resolveReviewCase(db.pool, review.caseId, body, "grace");
    const again = await resolveReviewCase(db.pool, review.caseId, body, "grace");
    expect(again).toMatchObject({ replayed: true, resolvedBy: "grace" });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM receipt WHERE step_id = $1", [review.stepIds.deliver]);
    expect(rows[0].n).toBe(1);
  });

  test("two people confirming at once: one receipt, the other is a replay", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const body = { resolution: "confirm_delivered", version: review.version, externalReference: "opq_7", note: "" } as const;
    const results = await Promise.all([resolveReviewCase(db.pool, review.caseId, body, "ann"), resolveReviewCase(db.pool, review.caseId, body, "bob")]);
    expect(results.map((r) => r.replayed).sort()).toEqual([false, true]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM receipt WHERE step_id = $1", [review.stepIds.deliver]);
    expect(rows[0].n).toBe(1);
  });
});

describe("lock order", () => {
  // A cancel or a "not delivered" resolution holds the request's row and then writes the case. A
  // "delivered" resolution that took the case first and the request second would deadlock with it.
  for (const resolution of ["confirm_delivered", "abandon"] as const) {
    test(`${resolution} waits for a transaction holding the request before touching the case`, async ({ db }) => {
      const review = await caseUnderReview(db.pool);
      const other = await db.pool.connect();
      try {
        await other.query("BEGIN");
        await other.query("SELECT id FROM workflow WHERE id = $1 FOR UPDATE", [review.workflowId]);
        const body =
          resolution === "confirm_delivered"
            ? ({ resolution, version: review.version, externalReference: "opq_1", note: "" } as const)
            : ({ resolution, version: review.version, note: "", customerReason: "We could not complete this." } as const);
        const resolving = resolveReviewCase(db.pool, review.caseId, body, "grace");
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query("SET LOCAL lock_timeout = '2s'");
        await other.query("UPDATE review_case SET assignee = assignee WHERE id = $1", [review.caseId]);
        await other.query("COMMIT");
        expect(await resolving).toMatchObject({ resolution, replayed: false });
      } finally {
        other.release();
      }
    });
  }
});

describe("refusals", () => {
  test("a different decision on a resolved case names who resolved it and when", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    await resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_delivered", version: review.version, externalReference: "opq_1", note: "" }, "grace");
    const refusal = await resolveReviewCase(db.pool, review.caseId, { resolution: "abandon", version: review.version, customerReason: "x", note: "y" }, "alan").catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ReviewConflictError);
    const conflict = refusal as ReviewConflictError;
    expect(conflict.conflict).toBe("already_resolved");
    expect(conflict.details).toMatchObject({ resolvedBy: "grace", resolution: "confirm_delivered", currentVersion: review.version + 1 });
    expect(conflict.details.resolvedAt).toMatch(/^\d{4}-/);
  });

  test("a stale version on an open case changes nothing", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const refusal = await resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_not_delivered", version: review.version + 5, note: "checked" }, "grace").catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ReviewConflictError);
    expect((refusal as ReviewConflictError).conflict).toBe("stale_version");
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ status: "open", version: review.version });
    expect(await stepRow(db.pool, review.stepIds.deliver!)).toMatchObject({ state: "indeterminate" });
  });

  test("confirm not delivered is refused once the request has ended: a retry would never run", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    await db.pool.query("UPDATE workflow SET status = 'cancelled' WHERE id = $1", [review.workflowId]);
    const refusal = await resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_not_delivered", version: review.version, note: "checked" }, "grace").catch((e: unknown) => e);
    expect((refusal as ReviewConflictError).conflict).toBe("request_ended");
  });
});

describe("confirm not delivered", () => {
  test("the step runs again with the same identity, budget for one more try, and the unknown try recorded as absent", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    await db.pool.query("UPDATE step SET attempt_budget = 1 WHERE id = $1", [review.stepIds.deliver]);
    await resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_not_delivered", version: review.version, note: "not in their console" }, "grace");

    expect(await stepRow(db.pool, review.stepIds.deliver!)).toMatchObject({ state: "ready", next_mode: "retry_same_identity", attempt_budget: 2, attempts_started: 1 });
    const { rows: attempts } = await db.pool.query("SELECT observed_effect, outcome_reason FROM attempt WHERE step_id = $1", [review.stepIds.deliver]);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].observed_effect).toBe("absent");
    expect(attempts[0].outcome_reason).toContain("confirmed absent in review by grace");
    expect((await trackingViewByToken(db.pool, review.trackingToken))!.headline.label).toBe("Recovering execution");

    const session = await registerSession(db.pool, "direct");
    const claimed = (await claimSteps(db.pool, session, DELIVERY_SERVED, 64)).find((step) => step.stepId === review.stepIds.deliver);
    expect(claimed).toMatchObject({ stepId: review.stepIds.deliver, mode: "retry_same_identity", requestIdentity: `fl-${review.stepIds.deliver}` });
  });
});

describe("abandon", () => {
  test("ends the step and the request; the customer sees the plain reason support wrote", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    await resolveReviewCase(db.pool, review.caseId, { resolution: "abandon", version: review.version, customerReason: "The recipient's address no longer accepts messages.", note: "bounced" }, "grace");
    expect(await stepRow(db.pool, review.stepIds.deliver!)).toMatchObject({ state: "failed" });
    expect(await stepRow(db.pool, review.stepIds.notify!)).toMatchObject({ state: "cancelled" });
    const { rows } = await db.pool.query("SELECT status, status_reason FROM workflow WHERE id = $1", [review.workflowId]);
    expect(rows[0]).toEqual({ status: "failed", status_reason: "The recipient's address no longer accepts messages." });
    const view = await trackingViewByToken(db.pool, review.trackingToken);
    expect(view).toMatchObject({ headline: { label: "Could not be completed" }, reason: "The recipient's address no longer accepts messages.", terminal: true });
  });
});

test("the case page's evidence: what was sent, the attempt in plain words, the destination's limits, what the customer sees", async ({ db }) => {
  const review = await caseUnderReview(db.pool, "lin@example.test");
  const detail = await reviewCaseDetail(db, review.caseId);
  expect(detail.step.sent).toEqual({ recipient: "lin@example.test", message: "hello", deliverVia: "opaque" });
  expect(detail.attempts).toHaveLength(1);
  expect(detail.attempts[0]!.summary).toMatch(/^Attempt 1 sent the request; no answer was observed/);
  expect(detail.destination.capabilities.filter((c) => c.available)).toEqual([]);
  expect(detail.destination.safeToRetry).toBe(false);
  expect(detail.customerSees?.headline.label).toBe("Delivery status needs review");
  expect(detail.case.reason).toContain("outcome unknown");
  expect(detail.sameReference).toEqual([]);
});

describe("racing a cancel", () => {
  test("confirm not delivered and a cancel of the request never leave a ready step in a cancelled request", async ({ db }) => {
    for (let round = 0; round < 12; round += 1) {
      const review = await caseUnderReview(db.pool, `race-${round}@example.test`);
      const [resolution] = await Promise.allSettled([
        resolveReviewCase(db.pool, review.caseId, { resolution: "confirm_not_delivered", version: review.version, note: "not in their system" }, "grace"),
        cancelWorkflow(db.pool, review.workflowId, "customer cancelled"),
      ]);
      const { rows } = await db.pool.query(
        "SELECT s.state, w.status FROM step s JOIN workflow w ON w.id = s.workflow_id WHERE s.id = $1",
        [review.stepIds.deliver],
      );
      // Either order is fine; a ready step in a cancelled request is not: nothing would ever claim it.
      expect(rows[0], `round ${round}, resolution ${resolution.status}`).not.toEqual({ state: "ready", status: "cancelled" });
      expect(["cancelled", "indeterminate"]).toContain(rows[0].state);
    }
  });
});
