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
 * Then the cooldown timer fires on the database clock and the order completes. The last line is
 * one JSON object, every figure in it read from Fenceline's answers (the requests' states and
 * milestones, the events' answers), never assumed.
 */
import { randomUUID } from "node:crypto";
import { createClient, type RequestDetail, type SentEvent } from "fenceline/client";
import { required } from "./env.js";
import type { order } from "./workflow.js";
import { COOLDOWN_MS, WAREHOUSE_CONFIRMED } from "./workflow.js";

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

const driven = await Promise.all(Array.from({ length: count }, (_, index) => drive(index)));

const done = (request: RequestDetail, step: string) => milestone(request, step)?.status === "done";
// The cooldown's milestone is reached when its timer fired; the wait began when the confirmation
// was reached: on the database clock, never less than COOLDOWN_MS apart.
const waitedMs = driven
  .filter(({ request }) => done(request, "cooldown"))
  .map(({ request }) => Date.parse(milestone(request, "cooldown")!.at!) - Date.parse(milestone(request, "confirmed")!.at!));

console.log(
  JSON.stringify({
    orders: driven.length,
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
  }),
);
