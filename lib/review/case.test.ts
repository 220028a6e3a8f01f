/**
 * Each attempt reads, for a support person, as what it did, what came back and how it ended:
 * a call that was never answered is never described as a failure of the destination.
 */
import { expect, test } from "vitest";
import { describeAttempt, type AttemptRow } from "./case";

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 29, 14, 2, seconds));
const attempt = (extra: Partial<AttemptRow>): AttemptRow => ({
  id: "a", mode: "execute", checkpoint: "invocation_began", outcome: null, outcomeReason: null, observedEffect: null,
  externalReference: null, createdAt: at(0), invocationBeganAt: at(1), responseObservedAt: null, endedAt: null, ...extra,
});

test("an unanswered call says so, with how long it waited and how it ended", () => {
  expect(describeAttempt(attempt({ outcome: "failed", outcomeReason: "unknown outcome: connection dropped", endedAt: at(31) }), 1)).toBe(
    "Attempt 1 sent the request; no answer was observed (gave up after 30.0 s); it failed: unknown outcome: connection dropped.",
  );
});

test("an answered call names the destination's reference", () => {
  expect(describeAttempt(attempt({ checkpoint: "response_observed", responseObservedAt: at(2), observedEffect: "present", externalReference: "opq_1" }), 2)).toBe(
    "Attempt 2 sent the request; the destination answered after 1.0 s with reference opq_1.",
  );
});

test("a try that never called, a status question, and a person's confirmation read differently", () => {
  expect(describeAttempt(attempt({ checkpoint: "identity_persisted", invocationBeganAt: null, outcome: "lease_lost" }), 1)).toBe(
    "Attempt 1 ended before calling the destination; it lost its authority (lease ended).",
  );
  expect(describeAttempt(attempt({ mode: "status_query", observedEffect: "absent", responseObservedAt: at(2) }), 3)).toBe(
    "Attempt 3 asked the destination what happened; the destination answered that nothing was applied.",
  );
  expect(describeAttempt(attempt({ mode: "retry_same_identity", observedEffect: "absent" }), 4)).toBe(
    "Attempt 4 sent the request again with the same request identity; a person confirmed nothing was applied.",
  );
});
