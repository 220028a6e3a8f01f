/**
 * `npm run demo [count]`: creates `count` orders (4 by default) and drives each to its end the way
 * a shop and its warehouse would, through the client and an app key:
 *
 * - half the orders are confirmed early: the warehouse's event is sent before the order even
 *   exists, so Fenceline keeps it, and the order's wait takes it as soon as it begins;
 * - the other half are confirmed while their order waits for it (the tracking page says
 *   "Waiting for the warehouse to confirm");
 * - every confirmation is then sent a second time with the same idempotency key, as a warehouse
 *   that lost the first answer would: it is the same event, not a second one.
 *
 * - every fourth order is cancelled once it is paid for and waits for the warehouse: Fenceline
 *   refunds its charge (from the charge's receipt) through the refund API, whose first answer is
 *   always lost, and the order reads cancelled once the refund has its receipt.
 *
 * Then the cooldown timer fires on the database clock and the order completes. Meanwhile a
 * schedule starts a stock count every 3 seconds (registered at the start, paused at the end). The last line is
 * one JSON object, every figure in it read from Fenceline's answers (the requests' states and
 * milestones, the events' answers), never assumed.
 */
import { randomUUID } from "node:crypto";
import { createClient, type RequestDetail, type SentEvent } from "fenceline/client";
import { required } from "./env.js";
import type { shipment } from "./shipment.js";
import type { order } from "./workflow.js";
import { COOLDOWN_MS, PAYMENTS_URL, stockCountSchedule, WAREHOUSE_CONFIRMED } from "./workflow.js";

const fenceline = createClient({ url: required("FENCELINE_URL"), apiKey: required("FENCELINE_API_KEY") });
const count = Number(process.argv[2] ?? 4);
if (!Number.isInteger(count) || count < 1 || count > 100) {
  console.error(`npm run demo -- <count>: a number of orders from 1 to 100, got ${process.argv[2]}`);
  process.exit(2);
}
const run = randomUUID().slice(0, 8);
const WAITING_WORDS = "Waiting for the warehouse to confirm.";

const milestone = (request: RequestDetail, step: string) => request.progress.milestones.find((m) => m.key === step);

/** Reads the order until `ready` says so (or it ended); the client's reads, twice a second. */
async function until(id: string, what: string, ready: (request: RequestDetail) => boolean): Promise<RequestDetail> {
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    const request = await fenceline.requests.get(id);
    if (ready(request) || request.progress.terminal) return request;
    if (Date.now() > giveUpAt) throw new Error(`order ${id}: ${what} did not happen within 60 s (is \`npm run worker\` running?)`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type Driven = {
  readonly request: RequestDetail;
  readonly early: boolean;
  readonly first: SentEvent;
  readonly second: SentEvent;
};
type Cancelled = { readonly request: RequestDetail; readonly chargeIds: readonly string[]; readonly paidWhenCancelled: boolean };

/** An order cancelled once it is paid for: Fenceline answers what it will undo, then undoes it. */
async function cancelAfterCharge(index: number): Promise<Cancelled> {
  const orderId = `order-${run}-${index + 1}`;
  const created = await fenceline.requests.create<typeof order>("order", { orderId, amountCents: 1_250 + index }, { idempotencyKey: orderId });
  const waiting = await until(created.id, "the wait for the warehouse", (request) => request.progress.happening === WAITING_WORDS);
  const cancelled = await fenceline.requests.cancel(created.id, { reason: "the customer cancelled" });
  const chargeIds = (cancelled.compensation?.undos ?? []).flatMap((undo) => (undo.undoes === "charge" && undo.externalReference ? [undo.externalReference] : []));
  const request = await until(created.id, "the refund", (r) => r.status === "cancelled" || r.progress.headline.state === "needs_review");
  console.error(`${orderId}: ${request.status}: ${request.progress.happening}`);
  return { request, chargeIds, paidWhenCancelled: milestone(waiting, "charge")?.status === "done" };
}

async function drive(index: number): Promise<Driven> {
  const orderId = `order-${run}-${index + 1}`;
  const early = index % 2 === 0;
  // One idempotency key per fact: "the warehouse confirmed this order".
  const confirm = () => fenceline.events.send(WAREHOUSE_CONFIRMED, orderId, { parcel: `parcel-${orderId}` }, { idempotencyKey: `confirmed-${orderId}` });

  const firstEarly = early ? await confirm() : null;
  const created = await fenceline.requests.create<typeof order>("order", { orderId, amountCents: 1_250 + index }, { idempotencyKey: orderId });
  console.error(`${orderId}: created ${created.id}; follow it at ${created.trackingUrl}`);
  let first = firstEarly;
  if (!first) {
    await until(created.id, "the wait for the warehouse", (request) => request.progress.happening === WAITING_WORDS);
    first = await confirm();
  }
  // The wait has begun and taken its event: the warehouse sends the same confirmation again.
  await until(created.id, "the warehouse's confirmation", (request) => milestone(request, "confirmed")?.status === "done");
  const second = await confirm();
  const request = await fenceline.requests.waitForEnd(created.id, { timeoutMs: 60_000 });
  console.error(`${orderId}: ${request.status}`);
  return { request, early, first, second };
}

// The clock's part: registering the schedule again is the same schedule; it was paused by the last run.
const registered = await fenceline.schedules.create(stockCountSchedule);
const schedule = registered.state === "paused" ? await fenceline.schedules.resume(registered.name, { reason: "npm run demo" }) : registered;
const firstDueAt = Date.parse(schedule.nextDueAt!);
console.error(`schedule ${schedule.name} (${schedule.cron} in ${schedule.timeZone}): next due ${schedule.upcoming.join(", ")}`);

const cancelledEvery = 4;
const cancelling = Promise.all(Array.from({ length: count }, (_, index) => index).filter((index) => index % cancelledEvery === cancelledEvery - 1).map(cancelAfterCharge));
const driven = await Promise.all(Array.from({ length: count }, (_, index) => index).filter((index) => index % cancelledEvery !== cancelledEvery - 1).map(drive));
const cancelled = await cancelling;
// The payment service's own ledger: a charge refunded twice would appear twice.
const refundsMade = ((await (await fetch(`${PAYMENTS_URL}/refunds`)).json()) as { chargeId: string }[]).filter((refund) =>
  cancelled.some(({ chargeIds }) => chargeIds.includes(refund.chargeId)),
);

/** Each order also ships 2 to 4 parcels: a shipment fans out one `parcel` request per parcel. */
async function ship(index: number): Promise<{ request: RequestDetail; parcels: number }> {
  const parcels = Array.from({ length: 2 + (index % 3) }, (_, i) => `P${i + 1}`);
  const created = await fenceline.requests.create<typeof shipment>("shipment", { orderId: `order-${run}-${index + 1}`, parcels }, { idempotencyKey: `shipment-${run}-${index + 1}` });
  return { request: await fenceline.requests.waitForEnd(created.id, { timeoutMs: 60_000 }), parcels: parcels.length };
}
const shipments = await Promise.all(Array.from({ length: count }, (_, index) => ship(index)));
// The parcels are the app's requests too (a child takes its parent's app): those of this run are
// the ones created since its first shipment. More than one per parcel would be a duplicate child.
const since = Math.min(...shipments.map(({ request }) => Date.parse(request.createdAt)));
let parcelRequests = 0;
for (let cursor: string | null | undefined = undefined; cursor !== null; ) {
  const page = await fenceline.requests.list({ kind: "parcel", limit: 200, ...(cursor ? { cursor } : {}) });
  parcelRequests += page.items.filter((item) => Date.parse(item.createdAt) >= since).length;
  cursor = page.items.some((item) => Date.parse(item.createdAt) < since) ? null : page.nextCursor;
}
const parcelsAsked = shipments.reduce((sum, { parcels }) => sum + parcels, 0);

// At least two firings seen, then the schedule is paused; its requests are counted by their due times.
const firedSince = async () => (await fenceline.schedules.get(schedule.name)).lastFirings.filter((f) => Date.parse(f.dueAt) >= firstDueAt && f.requestId).length;
for (const giveUpAt = Date.now() + 30_000; (await firedSince()) < 2 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 500));
await fenceline.schedules.pause(schedule.name, { reason: "the demo ended" });
const counted: string[] = [];
for (let cursor: string | undefined; ; ) {
  const page = await fenceline.requests.list({ kind: "stock-count", limit: 200, cursor });
  for (const item of page.items) {
    const due = (await fenceline.requests.get(item.id)).progress.title.replace("Stock count due ", "");
    if (Date.parse(due) >= firstDueAt) counted.push(due);
  }
  if (!page.nextCursor || page.items.some((item) => Date.parse(item.createdAt) < firstDueAt)) break;
  cursor = page.nextCursor;
}

const done = (request: RequestDetail, step: string) => milestone(request, step)?.status === "done";
// The cooldown's milestone is reached when its timer fired; the wait began when the confirmation
// was reached: on the database clock, never less than COOLDOWN_MS apart.
const waitedMs = driven
  .filter(({ request }) => done(request, "cooldown"))
  .map(({ request }) => Date.parse(milestone(request, "cooldown")!.at!) - Date.parse(milestone(request, "confirmed")!.at!));

console.log(
  JSON.stringify({
    orders: count,
    completed: driven.filter(({ request }) => request.status === "completed").length,
    timersFired: driven.filter(({ request }) => done(request, "cooldown")).length,
    timersEarly: waitedMs.filter((ms) => ms < COOLDOWN_MS).length,
    timerWaitedMs: { min: Math.min(...waitedMs), max: Math.max(...waitedMs), cooldownMs: COOLDOWN_MS },
    // An event counts as consumed when Fenceline says this order's wait took it.
    eventsConsumed: driven.filter(({ request, second }) => second.consumedBy?.requestId === request.id && second.consumedBy.step === "confirmed").length,
    eventsKeptEarly: driven.filter(({ early, first }) => early && first.consumedBy === null).length,
    eventsSentTwice: driven.filter(({ second }) => second.duplicate).length,
    // A second send that made a new event instead of answering with the first.
    duplicateEvents: driven.filter(({ first, second }) => second.id !== first.id || !second.duplicate).length,
    cancelledAfterCharge: cancelled.filter(({ request, paidWhenCancelled }) => paidWhenCancelled && request.status === "cancelled").length,
    refunds: refundsMade.length,
    duplicateRefunds: refundsMade.length - new Set(refundsMade.map((refund) => refund.chargeId)).size,
    refundsInReview: cancelled.filter(({ request }) => request.progress.headline.state === "needs_review").length,
    shipmentsCompleted: shipments.filter(({ request }) => request.status === "completed").length,
    children: parcelRequests,
    duplicateChildren: Math.max(0, parcelRequests - parcelsAsked),
    // Requests the schedule started during the demo, and due times that started more than one.
    scheduleFirings: counted.length,
    duplicateFirings: counted.length - new Set(counted).size,
  }),
);
