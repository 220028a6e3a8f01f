/**
 * The projection read by tracking token follows a real request through the engine: Preparing
 * before any external call, Waiting while one is in flight, Recovering after a lease expired and
 * a safe retry is under way, and a lease changing hands adds no milestone.
 */
import { expect } from "vitest";
import { beginInvocation, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession } from "@/lib/engine/session";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { dbTest as test } from "@/lib/db/test-database";
import { createRequest } from "@/lib/requests/create";
import { DELIVERY_SERVED, deliveryRequest, registerDelivery } from "@/lib/requests/test-support";
import { trackingViewByToken } from "./read";

test("a request seen by its end user, from Preparing through Recovering", async ({ db }) => {
  await registerDelivery(db.pool);
  const { request } = await createRequest(db.pool, deliveryRequest({ recipient: "ada@example.test", message: "hi", deliverVia: "opaque" }));
  const view = () => trackingViewByToken(db.pool, request.trackingToken);
  expect((await view())!.headline.state).toBe("preparing");

  const session = await registerSession(db.pool, "direct");
  const [prepare] = await claimSteps(db.pool, session, DELIVERY_SERVED, 1);
  expect((await view())!.headline.state).toBe("preparing");
  await commitReceipts(db.pool, session, [{ lease: { stepId: prepare!.stepId, fencingTerm: prepare!.fencingTerm, sessionId: session }, conclusion: { kind: "no_action_needed", reason: "prepared" } }]);

  const [reserve] = await claimSteps(db.pool, session, DELIVERY_SERVED, 1);
  const lease = { stepId: reserve!.stepId, fencingTerm: reserve!.fencingTerm, sessionId: session };
  await persistRequestIdentity(db.pool, lease, `fl-${reserve!.stepId}`, "1");
  await beginInvocation(db.pool, lease);
  const waiting = (await view())!;
  expect(waiting.headline.label).toBe("Waiting on an external service");
  expect(waiting.happening).toContain("the reservation service");
  expect(waiting.milestones.map((m) => [m.label, m.status])).toEqual([
    ["Request received", "done"],
    ["Reserving", "current"],
    ["Delivery", "upcoming"],
    ["Confirmation", "upcoming"],
  ]);

  // The lease expires; the fenced destination lets a newer term retry with the same identity.
  await setLeaseExpiry(db.pool, reserve!.stepId, -1);
  await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });
  expect((await view())!.headline.label).toBe("Recovering execution");
  const [again] = await claimSteps(db.pool, await registerSession(db.pool, "direct"), DELIVERY_SERVED, 1);
  expect(again!.fencingTerm).toBe(2n);
  const recovering = (await view())!;
  expect(recovering.headline.label).toBe("Recovering execution");
  expect(recovering.milestones.map((m) => m.label)).toEqual(waiting.milestones.map((m) => m.label));
  expect(recovering.terminal).toBe(false);
});

test("an unknown or malformed token reads as nothing", async ({ db }) => {
  expect(await trackingViewByToken(db.pool, "B".repeat(32))).toBeNull();
  expect(await trackingViewByToken(db.pool, "'; DROP TABLE workflow; --")).toBeNull();
});
