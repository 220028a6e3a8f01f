/**
 * fenceline/testing against the real engine, an embedded PostgreSQL and an in-process worker:
 * each fault leaves the evidence production recovery would act on, and the environment's reads
 * and waits report it. Properties:
 *
 * - answer lost at an idempotent destination: one effect, the receipt verified by idempotent replay;
 *   at an opaque one: a review case, and "confirm delivered" completes the request;
 * - a paused attempt whose lease expired acts on its stale view: its receipt is refused, recorded
 *   as a fencing rejection, and kept as a late observation, while its successor completed;
 * - an attempt killed before calling a queryable destination is settled by a status query;
 * - 429 with Retry-After waits without a lease; a timeout is an unknown outcome; a definite failure
 *   is an absent effect that may run again, and with no budget left the request cannot complete;
 * - the fenced fake rejects an older term; a wait that times out says where the request stands;
 * - a step's record is read in one snapshot: a refused receipt committed while it is read is seen
 *   wholly (its late observation and its fencing rejection) or not at all.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { recordRejections } from "@/lib/engine/rejection";
import { defineWorkflow, effect, type AdapterDefinition } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination, type FakeDestination, type TestEnvironment } from "@/lib/sdk/testing";

const milestone = { upcoming: "Sending", current: "Sending it", done: "Sent" };
const input = z.object({ to: z.string() });

/** One workflow per destination: a single step, `send`, that passes its input on. */
function sendingWorkflow(kind: string, adapter: AdapterDefinition<{ to: string }>, attemptBudget = 5) {
  return defineWorkflow({
    kind,
    version: 1,
    input,
    steps: { send: { adapter, attemptBudget, milestone, run: async (ctx) => effect(await ctx.invoke({ to: ctx.input.to })) } },
  });
}

const idempotent = fakeDestination<{ to: string }>("idempotent", { name: "mailer" });
const opaque = fakeDestination<{ to: string }>("opaque", { name: "printer" });
const queryable = fakeDestination<{ to: string }>("queryable", { name: "ledger" });
const strict = fakeDestination<{ to: string }>("idempotent", { name: "strict-mailer" });

const mail = sendingWorkflow("mail", idempotent.adapter);
const print = sendingWorkflow("print", opaque.adapter);
const ledger = sendingWorkflow("ledger", queryable.adapter);
const once = sendingWorkflow("once", strict.adapter, 1);

let env: TestEnvironment;
const effectsFor = (fake: FakeDestination<{ to: string }>, to: string) => fake.effects.filter((effect) => effect.payload.to === to);

beforeAll(async () => {
  env = await createTestEnvironment({ workflows: [mail, print, ledger, once] });
});
afterAll(() => env?.close());

describe("call faults", () => {
  test("answer lost at an idempotent destination: one effect, and the receipt is verified by idempotent replay", async () => {
    env.faults.answerLost({ step: "send", kind: "mail" });
    const request = await env.createRequest(mail, { to: "ada" });
    await env.waitForRequest(request.id, "completed");
    expect(effectsFor(idempotent, "ada")).toHaveLength(1);
    expect(idempotent.calls.filter((call) => call.payload.to === "ada").map((call) => call.outcome)).toEqual(["applied", "replayed"]);
    const send = await env.step(request.id, "send");
    expect(send.receipts).toEqual([expect.objectContaining({ verificationMethod: "idempotent_replay", externalReference: effectsFor(idempotent, "ada")[0]!.externalReference })]);
    expect(send.attempts).toHaveLength(2);
    expect(send.attempts[0]!.checkpoint).toBe("invocation_began");
    expect(send.recoveryDecisions.map((decision) => [decision.trigger, decision.category])).toEqual([["attempt_failed", "retry_same_key"]]);
  });

  test("answer lost at an opaque destination opens a review case; confirming delivery completes the request", async () => {
    env.faults.answerLost({ adapter: "printer" });
    const request = await env.createRequest(print, { to: "grace" });
    const open = await env.waitForReviewCase(request.id, "send");
    expect((await env.progress(request.id)).headline.state).toBe("needs_review");
    expect(effectsFor(opaque, "grace")).toHaveLength(1);

    await env.resolveReviewCase(open.id, { resolution: "confirm_delivered", externalReference: effectsFor(opaque, "grace")[0]!.externalReference, note: "found it" });
    const done = await env.waitForRequest(request.id, "completed");
    expect(done.progress.headline.state).toBe("completed");
    const send = await env.step(request.id, "send");
    expect(send.receipts).toEqual([expect.objectContaining({ verificationMethod: "manual_review", externalReference: "printer_1" })]);
    expect(send.reviewCases).toEqual([expect.objectContaining({ status: "resolved", resolution: "confirm_delivered", resolvedBy: "support@test" })]);
    expect(effectsFor(opaque, "grace")).toHaveLength(1);
  });

  test("429 with Retry-After: the step waits without a lease, then completes with one effect", async () => {
    env.faults.rateLimited({ kind: "mail" }, 300);
    const request = await env.createRequest(mail, { to: "linus" });
    await env.waitForRequest(request.id, "completed");
    const send = await env.step(request.id, "send");
    expect(send.attempts).toHaveLength(2);
    expect(send.leases[0]!.endReason).toBe("released");
    const waited = Date.parse(send.attempts[1]!.createdAt) - Date.parse(send.attempts[0]!.createdAt);
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(effectsFor(idempotent, "linus")).toHaveLength(1);
  });

  test("a timeout at a queryable destination is an unknown outcome that a status query settles", async () => {
    env.faults.timeout({ kind: "ledger" });
    const request = await env.createRequest(ledger, { to: "edsger" });
    await env.waitForRequest(request.id, "completed");
    const send = await env.step(request.id, "send");
    expect(send.recoveryDecisions[0]).toMatchObject({ trigger: "attempt_failed", category: "status_query" });
    expect(effectsFor(queryable, "edsger")).toHaveLength(1);
    expect(send.receipts[0]!.verificationMethod).toBe("direct_response");
  });

  test("a timeout whose effect landed is found by the status query: still one effect", async () => {
    env.faults.timeout({ kind: "ledger" }, { applied: true });
    const request = await env.createRequest(ledger, { to: "barbara" });
    await env.waitForRequest(request.id, "completed");
    expect(effectsFor(queryable, "barbara")).toHaveLength(1);
    expect((await env.step(request.id, "send")).receipts[0]!.verificationMethod).toBe("status_query");
  });

  test("a definite failure applies nothing and the step runs again; with no budget left the request cannot complete", async () => {
    env.faults.definiteFailure({ kind: "mail" }, { status: 400 });
    const retried = await env.createRequest(mail, { to: "alan" });
    await env.waitForRequest(retried.id, "completed");
    expect((await env.step(retried.id, "send")).attempts[0]!.observedEffect).toBe("absent");
    expect(effectsFor(idempotent, "alan")).toHaveLength(1);

    env.faults.definiteFailure({ kind: "once" });
    const refused = await env.createRequest(once, { to: "kurt" });
    const ended = await env.waitForRequest(refused.id, ["failed", "completed"]);
    expect(ended.status).toBe("failed");
    expect(ended.progress.headline.state).toBe("not_completed");
    expect(effectsFor(strict, "kurt")).toHaveLength(0);
  });
});

describe("checkpoint faults and the database clock", () => {
  test("a paused attempt past its lease acts on its stale view: its receipt is refused and kept as a late observation", async () => {
    const paused = env.faults.pauseAt("before_receipt", { kind: "mail" });
    const request = await env.createRequest(mail, { to: "margaret" });
    const stopped = await paused.reached;
    expect(stopped).toMatchObject({ requestId: request.id, step: "send", fencingTerm: 1n, checkpoint: "before_receipt" });
    await env.expireLease(stopped);
    // The answer was durable (checkpoint 4): recovery reconciles it into the receipt.
    await env.waitForRequest(request.id, "completed");

    paused.resume();
    const send = await env.waitForStep(request.id, "send", "has a late observation", (detail) => detail.lateObservations.length > 0);
    const reference = effectsFor(idempotent, "margaret")[0]!.externalReference;
    expect(send.recoveryDecisions.map((decision) => [decision.trigger, decision.category])).toEqual([["lease_expired", "reconcile"]]);
    // A renewal sent on waking may be refused too; the receipt is the write under test.
    expect(send.fencingRejections.filter((rejection) => rejection.operation === "commit_receipt")).toEqual([expect.objectContaining({ presentedTerm: 1, reason: "expired" })]);
    expect(send.lateObservations).toEqual([expect.objectContaining({ fencingTerm: 1, externalReference: reference })]);
    expect(send.receipts).toEqual([expect.objectContaining({ externalReference: reference })]);
    expect(effectsFor(idempotent, "margaret")).toHaveLength(1);
  });

  test("paused with the answer in hand, superseded by a newer term: its late answer is refused and kept", async () => {
    const paused = env.faults.pauseAt("destination_answered", { kind: "mail" });
    const request = await env.createRequest(mail, { to: "niklaus" });
    await env.expireLease(await paused.reached);
    await env.waitForRequest(request.id, "completed");
    paused.resume();
    // Wait for the refused response itself, not only a late observation: waking, the attempt may
    // be refused elsewhere first (its renewal).
    const send = await env.waitForStep(request.id, "send", "has a late observation and the refused response", (detail) =>
      detail.lateObservations.length > 0 && detail.fencingRejections.some((rejection) => rejection.operation === "observe_response"),
    );
    expect(send.fencingRejections.filter((rejection) => rejection.operation === "observe_response")).toEqual([expect.objectContaining({ presentedTerm: 1, currentTerm: 2, reason: "superseded" })]);
    expect(send.receipts).toEqual([expect.objectContaining({ fencingTerm: 2, verificationMethod: "idempotent_replay" })]);
    expect(effectsFor(idempotent, "niklaus")).toHaveLength(1);
  });

  test("an attempt killed after its invocation began, before the call, is settled by a status query: one effect", async () => {
    const killed = env.faults.killAt("invocation_began", { kind: "ledger" });
    const request = await env.createRequest(ledger, { to: "frances" });
    const stopped = await killed.reached;
    expect((await env.progress(request.id)).headline.state).toBe("waiting");
    await env.expireLease(stopped);
    await env.waitForRequest(request.id, "completed");
    const send = await env.step(request.id, "send");
    expect(send.recoveryDecisions[0]).toMatchObject({ trigger: "lease_expired", category: "status_query" });
    expect(effectsFor(queryable, "frances")).toHaveLength(1);
  });

  test("a step's record is one snapshot: a refusal committed mid-read shows both its late observation and its rejection, or neither", async () => {
    const request = await env.createRequest(mail, { to: "edsger" });
    await env.waitForRequest(request.id, "completed");
    const { step } = await env.step(request.id, "send");
    // Another connection holds the late observations while a refused receipt is written: the
    // read blocks on them mid-way, the refusal commits, and the read then goes on.
    const writer = new pg.Client({ connectionString: env.databaseUrl, options: "-c search_path=fenceline" });
    await writer.connect();
    try {
      await writer.query("BEGIN");
      await writer.query("LOCK TABLE late_observation IN ACCESS EXCLUSIVE MODE");
      const reading = env.step(request.id, "send");
      // Until the read waits on the lock (an event the database reports, not a sleep).
      for (;;) {
        const { rows } = await writer.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        if ((rows[0] as { n: number }).n > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const [refused] = await recordRejections(writer, env.workerSession, [
        { lease: { stepId: step.id, fencingTerm: 1n, sessionId: env.workerSession }, operation: "commit_receipt", payload: { externalReference: "ext-mid-read", result: null } },
      ]);
      expect(refused?.reason).toBe("lease_ended");
      await writer.query("COMMIT");
      const read = await reading;
      const refusedReceipts = read.fencingRejections.filter((rejection) => rejection.operation === "commit_receipt");
      expect(read.lateObservations.map((late) => late.id)).toEqual(refusedReceipts.map((rejection) => rejection.lateObservationId));
    } finally {
      await writer.end();
    }
    const after = await env.step(request.id, "send");
    expect(after.fencingRejections.map((rejection) => [rejection.operation, rejection.reason])).toEqual([["commit_receipt", "lease_ended"]]);
    expect(after.lateObservations.map((late) => late.externalReference)).toEqual(["ext-mid-read"]);
  });

  test("expiring a stopped attempt's lease that already expired on its own is no error: the kit never races the TTL", async () => {
    const paused = env.faults.pauseAt("before_receipt", { kind: "mail" });
    const request = await env.createRequest(mail, { to: "barbara" });
    const stopped = await paused.reached;
    await env.expireLease(stopped);
    // Recovery has ended the lease as expired by now: as if the TTL had run out before the test asked.
    await env.waitForRequest(request.id, "completed");
    await env.expireLease(stopped);
    paused.resume();
    await env.waitForStep(request.id, "send", "has the paused attempt's refused receipt", (detail) => detail.fencingRejections.some((rejection) => rejection.operation === "commit_receipt"));
  });

  test("expireLease without a stopped attempt needs an open lease, and says so", async () => {
    const request = await env.createRequest(mail, { to: "john" });
    await env.waitForRequest(request.id, "completed");
    await expect(env.expireLease({ requestId: request.id, step: "send" })).rejects.toThrow(/has no open lease/);
  });
});

describe("fakes and waits", () => {
  test("the fenced fake rejects an older term for the same resource and records no second effect", () => {
    const fenced = fakeDestination<{ to: string }>("fenced", { name: "vault", resourceOf: (payload) => payload.to });
    expect(fenced.adapter.contract).toMatchObject({ fenceEnforcement: true, idempotencyKeys: false });
    fenced.apply({ payload: { to: "x" }, requestIdentity: "a", epoch: 1n, fencingTerm: 2n });
    expect(() => fenced.apply({ payload: { to: "x" }, requestIdentity: "a", epoch: 1n, fencingTerm: 1n })).toThrow(/stale term/);
    fenced.apply({ payload: { to: "x" }, requestIdentity: "a", epoch: 1n, fencingTerm: 3n });
    expect(fenced.effects).toHaveLength(1);
    expect(fenced.calls.map((call) => call.outcome)).toEqual(["applied", "stale_term_rejected", "replaced"]);
    expect(queryable.query("nothing-sent")).toEqual({ status: "not_found" });
  });

  test("a wait that times out says where the request stands", async () => {
    const paused = env.faults.pauseAt("invocation_began", { kind: "mail" });
    const request = await env.createRequest(mail, { to: "donald" });
    await paused.reached;
    await expect(env.waitForRequest(request.id, "completed", { timeoutMs: 200 })).rejects.toThrow(
      /waited 200 ms for request .* to be completed; request .* \(mail@1\) is active; its end user sees ".+"\n {2}step send: leased, term 1/,
    );
    paused.resume();
    await env.waitForRequest(request.id, "completed");
  });
});
