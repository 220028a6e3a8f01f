/**
 * SPEC's recovery table, row by row: the same evidence always leads to the same decision, and no
 * ambiguous step goes straight back to ready.
 */
import { describe, expect, it } from "vitest";
import { pureContract, type AdapterContract } from "@/lib/adapters/contract";
import { decideRecovery, type RecoveryEvidence } from "./recovery-rules";

const opaque: AdapterContract = {
  name: "opaque",
  version: "1",
  externalEffect: true,
  idempotencyKeys: false,
  statusQuery: false,
  fenceEnforcement: false,
  repetition: "prohibited",
  timeoutMs: 10_000,
  concurrencyLimit: 1,
  rate: null,
  operationClasses: ["create"],
};
const idempotent: AdapterContract = { ...opaque, name: "idempotent", idempotencyKeys: true, repetition: "idempotency_protected" };
const queryable: AdapterContract = { ...opaque, name: "queryable", statusQuery: true, repetition: "reconcilable" };
const fenced: AdapterContract = { ...opaque, name: "fenced", fenceEnforcement: true, repetition: "idempotency_protected" };

const evidence = (overrides: Partial<RecoveryEvidence>): RecoveryEvidence => ({
  trigger: "lease_expired",
  checkpoint: "invocation_began",
  mode: "execute",
  requestIdentity: "fl-1",
  observedExternalReference: null,
  observedEffect: null,
  earlierOutcomeUnknown: false,
  receiptExists: false,
  lateObservations: [],
  adapter: { name: "opaque", version: "1" },
  contract: opaque,
  attemptsStarted: 1,
  attemptBudget: 5,
  workflowStatus: "active",
  workflowDeadlinePassed: false,
  ...overrides,
});

describe("recovery table", () => {
  it("makes a step ready when no request identity was persisted", () => {
    expect(decideRecovery(evidence({ checkpoint: "created", requestIdentity: null }))).toEqual({ category: "make_ready", nextMode: "execute" });
  });

  it("retries with the same identity when the identity was persisted but the invocation never began", () => {
    expect(decideRecovery(evidence({ checkpoint: "identity_persisted" }))).toEqual({
      category: "retry_same_identity",
      nextMode: "retry_same_identity",
    });
  });

  it("retries with the same key when the invocation began at a destination that honours idempotency keys", () => {
    expect(decideRecovery(evidence({ contract: idempotent })).category).toBe("retry_same_key");
  });

  it("queries status when the invocation began at a queryable destination", () => {
    expect(decideRecovery(evidence({ contract: queryable }))).toEqual({ category: "status_query", nextMode: "status_query" });
  });

  it("opens a review case when the invocation began at an opaque destination", () => {
    expect(decideRecovery(evidence({ contract: opaque })).category).toBe("review");
  });

  it("retries under a newer term at a destination that enforces the fence itself", () => {
    expect(decideRecovery(evidence({ contract: fenced })).category).toBe("retry_same_identity");
  });

  it("reconciles an observed result into a receipt when the receipt is missing", () => {
    expect(decideRecovery(evidence({ checkpoint: "response_observed", observedExternalReference: "ext-1" }))).toEqual({
      category: "reconcile",
      externalReference: "ext-1",
      source: "attempt",
    });
  });

  it("reconciles from a late observation that matches the request identity", () => {
    const decision = decideRecovery(
      evidence({ lateObservations: [{ id: "1", requestIdentity: "fl-1", externalReference: "ext-9" }] }),
    );
    expect(decision).toEqual({ category: "reconcile", externalReference: "ext-9", source: "late_observation" });
  });

  it("raises an integrity conflict when two external references disagree", () => {
    const decision = decideRecovery(
      evidence({
        checkpoint: "response_observed",
        observedExternalReference: "ext-1",
        lateObservations: [{ id: "1", requestIdentity: "fl-1", externalReference: "ext-2" }],
      }),
    );
    expect(decision.category).toBe("review");
    expect(decision).toMatchObject({ reason: expect.stringContaining("integrity conflict") });
  });

  it("converges when two observations agree", () => {
    const decision = decideRecovery(
      evidence({
        checkpoint: "response_observed",
        observedExternalReference: "ext-1",
        lateObservations: [{ id: "1", requestIdentity: "fl-1", externalReference: "ext-1" }],
      }),
    );
    expect(decision.category).toBe("reconcile");
  });

  it("acknowledges a step that already has a receipt, never re-executing it", () => {
    expect(decideRecovery(evidence({ receiptExists: true }))).toEqual({ category: "acknowledge" });
  });

  it("sends an invoked step whose adapter has no registered contract to review, naming the adapter", () => {
    const decision = decideRecovery(evidence({ contract: null, adapter: { name: "payments", version: "3" } }));
    expect(decision).toEqual({ category: "review", reason: expect.stringContaining("no contract is registered for adapter payments@3") });
  });

  it("still makes a step ready before its invocation began, with or without a contract", () => {
    expect(decideRecovery(evidence({ contract: null, checkpoint: "created", requestIdentity: null }))).toEqual({ category: "make_ready", nextMode: "execute" });
  });

  it("never sends an ambiguous step straight back to ready, whatever the contract", () => {
    for (const contract of [opaque, idempotent, queryable, fenced]) {
      expect(decideRecovery(evidence({ contract })).category).not.toBe("make_ready");
    }
  });

  it("runs a pure step again after its invocation began, since repeating it is safe", () => {
    expect(decideRecovery(evidence({ contract: pureContract })).category).toBe("make_ready");
  });
});

describe("budget, deadline and cancellation", () => {
  it("gives up on a step that never began once its attempt budget is spent", () => {
    expect(decideRecovery(evidence({ checkpoint: "created", requestIdentity: null, attemptsStarted: 5 }))).toMatchObject({
      category: "give_up",
      stepState: "failed",
    });
  });

  it("sends an unknown outcome to review, never to failure, once the budget is spent", () => {
    expect(decideRecovery(evidence({ contract: idempotent, attemptsStarted: 5 })).category).toBe("review");
  });

  it("cancels a step that never began when its workflow was cancelled", () => {
    expect(decideRecovery(evidence({ checkpoint: "identity_persisted", workflowStatus: "cancelled" }))).toMatchObject({
      category: "give_up",
      stepState: "cancelled",
    });
  });

  it("reviews an invoked step of a cancelled workflow instead of pretending nothing happened", () => {
    expect(decideRecovery(evidence({ contract: queryable, workflowStatus: "cancelled" })).category).toBe("review");
  });

  it("fails a step that never began once the workflow deadline passed", () => {
    expect(decideRecovery(evidence({ checkpoint: "created", requestIdentity: null, workflowDeadlinePassed: true }))).toMatchObject({
      category: "give_up",
      reason: "workflow deadline passed",
    });
  });
});

describe("what the destination said about the effect", () => {
  it("retries with the same identity when the destination answered that nothing was applied", () => {
    for (const contract of [opaque, idempotent, queryable, fenced]) {
      expect(decideRecovery(evidence({ contract, checkpoint: "response_observed", observedEffect: "absent" }))).toEqual({
        category: "retry_same_identity",
        nextMode: "retry_same_identity",
      });
    }
  });

  it("fails a step whose effect is known to be absent once the budget is spent", () => {
    expect(decideRecovery(evidence({ checkpoint: "response_observed", observedEffect: "absent", attemptsStarted: 5 }))).toMatchObject({
      category: "give_up",
      stepState: "failed",
    });
  });

  it("reviews instead of failing when an earlier attempt's outcome is still unknown", () => {
    const decision = decideRecovery(
      evidence({ contract: queryable, checkpoint: "response_observed", observedEffect: "absent", attemptsStarted: 5, earlierOutcomeUnknown: true }),
    );
    expect(decision.category).toBe("review");
  });

  it("a status query that never got an answer asks again; at the end of the budget a person decides", () => {
    const again = evidence({ contract: queryable, checkpoint: "identity_persisted", mode: "status_query", earlierOutcomeUnknown: true });
    expect(decideRecovery(again)).toEqual({ category: "status_query", nextMode: "status_query" });
    expect(decideRecovery({ ...again, attemptsStarted: 5 }).category).toBe("review");
  });

  it("a status query that found nothing leads to a retry with the same identity, not another query", () => {
    expect(
      decideRecovery(evidence({ contract: queryable, checkpoint: "response_observed", mode: "status_query", observedEffect: "absent", earlierOutcomeUnknown: true })),
    ).toEqual({ category: "retry_same_identity", nextMode: "retry_same_identity" });
  });

  it("reconciles an observed effect that came without an external reference", () => {
    expect(decideRecovery(evidence({ checkpoint: "response_observed", observedEffect: "present" }))).toEqual({
      category: "reconcile",
      externalReference: null,
      source: "attempt",
    });
  });
});
