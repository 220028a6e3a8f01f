/**
 * The staff overview counts what is true now, from real requests driven through the engine: active
 * requests by the headline their customers see (the SQL that counts them agrees with the
 * projection each customer gets), open and overdue review cases, receipts of the last hour only,
 * live workers only, blocked destinations, and the last hour's churn apart from uncertainty. Each
 * figure's link opens a list holding exactly what the figure counts.
 */
import { expect } from "vitest";
import { listRequestsQuery } from "@/lib/api/contract/engineer/requests";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { reviewQueueQuery } from "@/lib/api/contract/support";
import { dbTest as test } from "@/lib/db/test-database";
import { beginInvocation, persistRequestIdentity } from "@/lib/engine/checkpoint";
import { claimSteps } from "@/lib/engine/lease";
import { commitReceipts } from "@/lib/engine/receipt";
import { runRecoveryScan } from "@/lib/engine/recovery";
import { registerSession, stopSession } from "@/lib/engine/session";
import { setLeaseExpiry } from "@/lib/engine/test-support";
import { IN_FLIGHT_HEADLINES } from "@/lib/projection/project";
import { trackingViewByWorkflowId } from "@/lib/projection/read";
import { createRequest } from "@/lib/requests/create";
import { listRequests } from "@/lib/requests/list";
import { DELIVERY_SERVED, deliveryRequest } from "@/lib/requests/test-support";
import { listReviewCases } from "@/lib/review/queue";
import { caseUnderReview } from "@/lib/review/test-support";
import { listSteps } from "@/lib/steps/list";
import { readOverview } from "./read";

const paramsOf = (href: string) => Object.fromEntries(new URL(href, "http://fenceline.test").searchParams);

test("an empty system reads as zero everywhere, with nothing blocked", async ({ db }) => {
  const overview = await readOverview(db.pool);
  expect(overview.inFlight.map((figure) => [figure.headline, figure.count])).toEqual(IN_FLIGHT_HEADLINES.map((headline) => [headline, 0]));
  expect([overview.inFlightTotal.count, overview.openReviews.count, overview.overdueReviews.count, overview.receiptsLastHour.count, overview.workersAlive.count]).toEqual([0, 0, 0, 0, 0]);
  expect(overview.blockedDestinations).toEqual([]);
  expect(overview.failingEndpoints).toEqual([]);
  expect(overview.churn.points).toHaveLength(12);
  expect(overview.churn.lines.map((line) => line.total)).toEqual([0, 0, 0, 0]);
  expect(overview.uncertainty.lines.map((line) => line.total)).toEqual([0, 0, 0]);
});

test("the figures of a system in motion, each linking to the list of exactly what it counts", async ({ db }) => {
  // Needs review: an opaque delivery whose lease expired mid-call (done first: it claims and hands back any ready step).
  const review = await caseUnderReview(db.pool, "review@example.test");
  const create = async (recipient: string) => (await createRequest(db.pool, deliveryRequest({ recipient, message: "m", deliverVia: "queryable" }))).request.id;
  const preparing = await create("preparing@example.test");
  const waiting = await create("waiting@example.test");
  const recovering = await create("recovering@example.test");
  const cancelled = await create("cancelled@example.test");
  await db.pool.query("UPDATE workflow SET status = 'cancelled' WHERE id = $1", [cancelled]);

  const session = await registerSession(db.pool, "direct");
  /** Claims the ready steps and keeps the one of `workflowId`'s step `name`, handing the rest back untouched. */
  const stepOf = async (workflowId: string, name: string) =>
    (await db.pool.query<{ id: string }>("SELECT id FROM step WHERE workflow_id = $1 AND name = $2", [workflowId, name])).rows[0]!.id;
  const claimOnly = async (stepId: string) => {
    await db.pool.query("UPDATE step SET next_eligible_at = now() + interval '1 hour' WHERE state = 'ready' AND id <> $1", [stepId]);
    const [claimed] = await claimSteps(db.pool, session, DELIVERY_SERVED, 1);
    await db.pool.query("UPDATE step SET next_eligible_at = now() WHERE state = 'ready' AND next_eligible_at > now() + interval '50 minutes'");
    expect(claimed!.stepId).toBe(stepId);
    return { stepId, fencingTerm: claimed!.fencingTerm, sessionId: session };
  };
  const prepareDone = async (workflowId: string) => {
    const lease = await claimOnly(await stepOf(workflowId, "prepare"));
    await commitReceipts(db.pool, session, [{ lease, conclusion: { kind: "no_action_needed", reason: "prepared" } }]);
  };
  // Waiting: the reservation call has begun.
  await prepareDone(waiting);
  const waitingLease = await claimOnly(await stepOf(waiting, "reserve"));
  await persistRequestIdentity(db.pool, waitingLease, `fl-${waitingLease.stepId}`, "1");
  await beginInvocation(db.pool, waitingLease);
  // Recovering: the reservation's lease expired; recovery makes a safe retry.
  await prepareDone(recovering);
  const recoveringLease = await claimOnly(await stepOf(recovering, "reserve"));
  await persistRequestIdentity(db.pool, recoveringLease, `fl-${recoveringLease.stepId}`, "1");
  await beginInvocation(db.pool, recoveringLease);
  await setLeaseExpiry(db.pool, recoveringLease.stepId, -1);
  await runRecoveryScan(db.pool, { batchSize: 10, decidedBy: "test" });

  // One review case past its review-by time; a receipt from two hours ago; a stopped and a silent worker; a blocked destination.
  await db.pool.query("UPDATE review_case SET review_by = now() - interval '1 second' WHERE id = $1", [review.caseId]);
  const old = await create("old@example.test");
  await db.pool.query(
    `INSERT INTO receipt (workflow_id, step_id, input_digest, verification_method, fencing_term, epoch, created_at)
     SELECT workflow_id, id, input_digest, 'no_action_needed', 0, 1, now() - interval '2 hours' FROM step WHERE workflow_id = $1 AND name = 'prepare'`,
    [old],
  );
  await stopSession(db.pool, await registerSession(db.pool, "direct"), "test");
  await db.pool.query("UPDATE worker_session SET last_heartbeat_at = now() - interval '31 seconds' WHERE id = $1", [await registerSession(db.pool, "direct")]);
  await db.pool.query("INSERT INTO destination_block (adapter, epoch, reason) VALUES ('demo-fenced', 2, 'the destination refused epoch 3')");
  // Endpoints: one failing for over an hour (shown), one for minutes, one disabled, one healthy (none shown).
  const { rows: endpoints } = await db.pool.query<{ id: string }>(
    `INSERT INTO webhook_endpoint (url, secret, created_by, failing_since, disabled_at)
     VALUES ('https://long.example/hook', 's', 't', now() - interval '61 minutes', NULL),
            ('https://brief.example/hook', 's', 't', now() - interval '5 minutes', NULL),
            ('https://off.example/hook', 's', 't', now() - interval '2 hours', now()),
            ('https://fine.example/hook', 's', 't', NULL, NULL)
     RETURNING id`,
  );

  const overview = await readOverview(db.pool);
  const byHeadline = Object.fromEntries(overview.inFlight.map((figure) => [figure.headline, figure]));
  // `old` has done nothing yet: it is preparing too.
  expect(Object.fromEntries(overview.inFlight.map((figure) => [figure.headline, figure.count]))).toEqual({ preparing: 2, scheduled: 0, waiting: 1, recovering: 1, needs_review: 1 });
  expect(overview.inFlightTotal.count).toBe(5);

  // The SQL's headline is the one each customer sees, and each figure's link lists exactly those requests.
  const expected = { preparing: [preparing, old], scheduled: [], waiting: [waiting], recovering: [recovering], needs_review: [review.workflowId] };
  for (const headline of IN_FLIGHT_HEADLINES) {
    for (const id of expected[headline]) expect((await trackingViewByWorkflowId(db.pool, id))!.headline.state).toBe(headline);
    const listed = await listRequests(db.pool, listRequestsQuery.parse(paramsOf(byHeadline[headline]!.href)));
    expect(listed.items.map((item) => item.id).sort()).toEqual([...expected[headline]].sort());
  }
  const allActive = await listRequests(db.pool, listRequestsQuery.parse(paramsOf(overview.inFlightTotal.href)));
  expect(allActive.items).toHaveLength(overview.inFlightTotal.count);
  expect(allActive.items.map((item) => item.id)).not.toContain(cancelled);

  expect(overview.openReviews.count).toBe(1);
  expect(overview.overdueReviews.count).toBe(1);
  for (const figure of [overview.openReviews, overview.overdueReviews]) {
    const queue = await listReviewCases(db.pool, reviewQueueQuery.parse(paramsOf(figure.href)), "anyone@staff.test");
    expect(queue.items.map((item) => item.id)).toEqual([review.caseId]);
  }
  // A case not yet due is open but not overdue, in the figure and in the list behind it.
  await db.pool.query("UPDATE review_case SET review_by = now() + interval '1 hour' WHERE id = $1", [review.caseId]);
  const later = await readOverview(db.pool);
  expect([later.openReviews.count, later.overdueReviews.count]).toEqual([1, 0]);
  expect((await listReviewCases(db.pool, reviewQueueQuery.parse(paramsOf(later.overdueReviews.href)), "anyone@staff.test")).items).toEqual([]);

  const { rows: receipts } = await db.pool.query<{ step_id: string }>("SELECT step_id FROM receipt WHERE created_at > now() - interval '1 hour'");
  // The prepare steps of waiting and recovering, and the two steps caseUnderReview completed; not the old one.
  expect(overview.receiptsLastHour.count).toBe(4);
  expect(receipts).toHaveLength(4);
  const receiptSteps = await listSteps(db.pool, listStepsQuery.parse(paramsOf(overview.receiptsLastHour.href)));
  expect(receiptSteps.items.map((step) => step.id).sort()).toEqual(receipts.map((row) => row.step_id).sort());

  // Sessions: caseUnderReview's two and this test's one are alive; the stopped and the silent are not.
  expect(overview.workersAlive.count).toBe(3);
  expect(overview.blockedDestinations).toEqual([
    { adapter: "demo-fenced", epoch: "2", reason: "the destination refused epoch 3", since: expect.any(String), href: "/steps?adapter=demo-fenced" },
  ]);

  expect(overview.failingEndpoints).toEqual([{ id: endpoints[0]!.id, url: "https://long.example/hook", since: expect.any(String), href: `/webhooks/${endpoints[0]!.id}` }]);

  // The last hour's churn and uncertainty, each line the sum of its points.
  const churn = Object.fromEntries(overview.churn.lines.map((line) => [line.id, line.total]));
  const { rows: events } = await db.pool.query<{ kind: string; n: number }>("SELECT kind::text, count(*)::int AS n FROM lease_history WHERE at > now() - interval '1 hour' GROUP BY kind");
  const eventCount = (kind: string) => events.find((row) => row.kind === kind)?.n ?? 0;
  expect(churn).toEqual({ lease_acquisitions: eventCount("acquired"), lease_renewal_refusals: 0, lease_expiries: eventCount("expiry_observed"), lease_revocations: 0 });
  expect(churn.lease_expiries).toBe(2);
  const uncertainty = Object.fromEntries(overview.uncertainty.lines.map((line) => [line.id, line.total]));
  expect(uncertainty.steps_entering_unknown).toBe(2);
  for (const trend of [overview.churn, overview.uncertainty]) {
    for (const line of trend.lines) expect(trend.points.reduce((sum, point) => sum + (point[line.id] as number), 0)).toBe(line.total);
  }
});
