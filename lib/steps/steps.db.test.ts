/**
 * The engineer's step views read the engine's records as they are: one row per fencing term with
 * its own events, a stale term's refused write marked with the presented and the current term,
 * attempts kept apart, and a revoke that is recorded and then decided by recovery from evidence.
 */
import { describe, expect } from "vitest";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { signedIn } from "@/lib/auth/test-support";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, observeResponse, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { AuthorityLostError, NotFoundError } from "@/lib/engine/errors";
import { claimSteps } from "@/lib/engine/lease";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { createSingleStepWorkflows, setLeaseExpiry, truncateEngineTables, servedFor } from "@/lib/engine/test-support";
import { readStepDetail } from "./detail";
import { listSteps } from "./list";
import { revokeStepLease } from "./revoke";

const pure = { adapter: "pure", operation: "noop", stepClass: "pure" } as const;

describe("step detail", () => {
  test("shows two terms after an expiry, and the stale holder's refused write with presented and current terms", async ({ db }) => {
    await truncateEngineTables(db.pool);
    const ids = await createSingleStepWorkflows(db.pool, 2, pure);
    const first = await registerSession(db.pool, "direct");
    const [claimed] = await claimSteps(db.pool, first, servedFor("pure"), 1);
    const stepId = claimed?.stepId;
    const otherStepId = ids.find((id) => id !== stepId);
    await db.pool.query("UPDATE step SET next_eligible_at = now() + interval '1 hour' WHERE id = $1", [otherStepId]);
    const staleLease = { stepId: stepId!, fencingTerm: 1n, sessionId: first };
    await persistRequestIdentity(db.pool, staleLease, "identity-1", "1");

    await setLeaseExpiry(db.pool, stepId!, -1);
    const decided = await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
    expect(decided.map((d) => d.decision.category)).toEqual(["retry_same_identity"]);

    const second = await registerSession(db.pool, "direct");
    const [reclaimed] = await claimSteps(db.pool, second, servedFor("pure"), 1);
    expect(reclaimed).toMatchObject({ stepId, fencingTerm: 2n });
    await expect(beginInvocation(db.pool, staleLease)).rejects.toBeInstanceOf(AuthorityLostError);

    const detail = await readStepDetail(db.pool, stepId!);
    expect(detail.step).toMatchObject({ id: stepId, state: "leased", fencingTerm: 2, leaseTtlMs: 5_000 });
    expect(detail.leases.map((l) => [l.fencingTerm, l.ownerSessionId, l.endReason])).toEqual([
      [1, first, "expired"],
      [2, second, null],
    ]);
    expect(detail.leases[0]!.events.map((e) => e.kind)).toEqual(["acquired", "expiry_observed"]);
    expect(detail.leases[1]!.events.map((e) => e.kind)).toEqual(["acquired"]);
    expect(detail.leases[0]!.rejections).toEqual([
      expect.objectContaining({ operation: "begin_invocation", presentedTerm: 1, currentTerm: 2, reason: "superseded", presentedOwner: first }),
    ]);
    expect(detail.leases[1]!.rejections).toEqual([]);
    expect(detail.attempts.map((a) => [a.fencingTerm, a.checkpoint, a.outcome])).toEqual([
      [1, "identity_persisted", "lease_lost"],
      [2, "created", null],
    ]);
    expect(detail.recoveryDecisions).toEqual([expect.objectContaining({ fencingTerm: 1, trigger: "lease_expired", category: "retry_same_identity" })]);
    expect(detail.workflow.steps).toEqual([expect.objectContaining({ id: stepId, name: "only" })]);

    // The list's filters find the step by its evidence, and not the untouched one.
    const withRejection = await listSteps(db.pool, listStepsQuery.parse({ hasRejection: "true" }));
    expect(withRejection.items.map((s) => s.id)).toEqual([stepId]);
    expect(withRejection.items[0]).toMatchObject({ fencingRejections: 1, currentLease: { fencingTerm: 2, ownerSessionId: second } });
    const expired = await listSteps(db.pool, listStepsQuery.parse({ leaseEvent: "expiry_observed" }));
    expect(expired.items.map((s) => s.id)).toEqual([stepId]);
    const ready = await listSteps(db.pool, listStepsQuery.parse({ state: "ready" }));
    expect(ready.items.map((s) => s.id)).toEqual([otherStepId]);
  });

  test("an unknown step is a NotFoundError", async ({ db }) => {
    await expect(readStepDetail(db.pool, "00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("step list", () => {
  test("pages by (updated_at, id) without repeating or skipping a step", async ({ db }) => {
    await truncateEngineTables(db.pool);
    const ids = await createSingleStepWorkflows(db.pool, 5, { adapter: "pure", operation: "noop", stepClass: "pure" });
    // Two steps share one updated_at: the id breaks the tie.
    await db.pool.query("UPDATE step SET updated_at = '2026-01-01T00:00:00.000001Z' WHERE id = ANY($1)", [ids.slice(0, 2)]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const result = await listSteps(db.pool, listStepsQuery.parse({ limit: "2", cursor, adapter: "pure" }));
      seen.push(...result.items.map((s) => s.id));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    expect(seen.toSorted()).toEqual(ids.toSorted());
    expect(new Set(seen).size).toBe(5);
  });
});

describe("revoke", () => {
  test("ends the lease as revoked, records who and why, and lets recovery decide from the evidence", async ({ db }) => {
    await truncateEngineTables(db.pool);
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, { adapter: "opaque", operation: "deliver", stepClass: "pure" });
    const session = await registerSession(db.pool, "direct");
    await claimSteps(db.pool, session, servedFor("opaque"), 1);
    const lease = { stepId: stepId!, fencingTerm: 1n, sessionId: session };
    await persistRequestIdentity(db.pool, lease, "identity-1", "1");
    await beginInvocation(db.pool, lease);

    const result = await revokeStepLease(db.pool, stepId!, "worker looks wedged", "engineer (test)");
    // Invocation began at an opaque destination: only a person can settle it, revoke or not.
    expect(result).toMatchObject({ stepId, revokedTerm: 1, decision: { category: "review" } });

    const detail = await readStepDetail(db.pool, stepId!);
    expect(detail.leases[0]).toMatchObject({ endReason: "revoked" });
    expect(detail.leases[0]!.events.at(-1)).toMatchObject({ kind: "revoked", reason: "worker looks wedged (by engineer (test))" });
    expect(detail.reviewCases).toEqual([expect.objectContaining({ status: "open" })]);
    await expect(observeResponse(db.pool, lease, "ref-1", {})).rejects.toMatchObject({ reason: "revoked" });
  });

  test("through the route: no session is a 401, support a 403, a missing reason a 400, a cross-site request a 403, nothing to revoke a 409", async ({ db }) => {
    await truncateEngineTables(db.pool);
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, pure);
    process.env.DATABASE_URL = db.url;
    const { POST } = await import("@/app/api/steps/[id]/revoke/route");
    const engineer = await signedIn(db.pool, ["engineer"]);
    const support = await signedIn(db.pool, ["support"]);
    const call = (body: unknown, headers: Record<string, string> = engineer.headers) =>
      POST(
        new Request(`http://localhost/api/steps/${stepId}/revoke`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
        { params: Promise.resolve({ id: stepId! }) },
      );
    expect((await call({ reason: "stuck" }, {})).status).toBe(401);
    expect((await call({ reason: "stuck" }, support.headers)).status).toBe(403);
    expect((await call({})).status).toBe(400);
    expect((await call({ reason: "stuck" }, { ...engineer.headers, "sec-fetch-site": "cross-site" })).status).toBe(403);
    const refused = await call({ reason: "stuck" });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: "urn:fenceline:problem:no-open-lease", code: "no-open-lease", title: "No open lease" });
    await (await import("@/lib/db/pool")).pool().end();
  });

  test("a step without an open lease is a 409, an unknown step a 404", async ({ db }) => {
    await truncateEngineTables(db.pool);
    const [stepId] = await createSingleStepWorkflows(db.pool, 1, pure);
    await expect(revokeStepLease(db.pool, stepId!, "nothing held", "engineer (test)")).rejects.toMatchObject({ code: "no_open_lease", stepId });
    await expect(revokeStepLease(db.pool, "00000000-0000-4000-8000-000000000000", "nothing", "engineer (test)")).rejects.toBeInstanceOf(NotFoundError);
  });
});
