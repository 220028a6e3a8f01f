/**
 * "Taking longer than usual" is said exactly when a request has waited on one step longer than
 * both the floor and the 90th percentile of that step's time to settle for its kind over the
 * last day, and only when the day holds enough settled steps to say what is usual. Each test
 * puts the request just before and just after its threshold.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { createRequest } from "@/lib/requests/create";
import { deliveryRequest, registerDelivery } from "@/lib/requests/test-support";
import { trackingViewByToken } from "./read";
import { LONGER_THAN_USUAL } from "./sql";

const HISTORY = LONGER_THAN_USUAL.minSamples;

/**
 * Requests made an hour ago whose `prepare` settled after 10, 20, … seconds (so its 90th
 * percentile is 91 s) and whose `reserve` settled 5 s after that (well under the floor).
 */
async function settledHistory(pool: Pool): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 1; k <= HISTORY; k += 1) {
    const { request } = await createRequest(pool, deliveryRequest({ recipient: `h${k}@example.test`, message: "earlier", deliverVia: "idempotent" }));
    await pool.query(
      `WITH made AS (UPDATE workflow SET created_at = now() - interval '1 hour' WHERE id = $1 RETURNING created_at)
       UPDATE step s SET state = 'completed',
              completed_at = made.created_at + make_interval(secs => $2 * 10 + CASE s.name WHEN 'reserve' THEN 5 ELSE 0 END)
       FROM made WHERE s.workflow_id = $1 AND s.name IN ('prepare', 'reserve')`,
      [request.id, k],
    );
    ids.push(request.id);
  }
  return ids;
}

/** A request on `prepare` that was made `seconds` ago. */
async function onPrepareFor(pool: Pool, seconds: number): Promise<string> {
  const { request } = await createRequest(pool, deliveryRequest({ recipient: "now@example.test", message: "now", deliverVia: "idempotent" }));
  await pool.query(`UPDATE workflow SET created_at = now() - make_interval(secs => $2) WHERE id = $1`, [request.id, seconds]);
  return request.trackingToken;
}

/** A request on `reserve` whose `prepare` concluded `seconds` ago. */
async function onReserveFor(pool: Pool, seconds: number): Promise<string> {
  const { request } = await createRequest(pool, deliveryRequest({ recipient: "now@example.test", message: "now", deliverVia: "idempotent" }));
  await pool.query(
    `WITH prepared AS (
       UPDATE step SET state = 'completed', completed_at = now() - make_interval(secs => $2) WHERE workflow_id = $1 AND name = 'prepare' RETURNING id
     )
     UPDATE step SET state = 'ready', pending_dependencies = 0 WHERE workflow_id = $1 AND name = 'reserve' AND EXISTS (SELECT 1 FROM prepared)`,
    [request.id, seconds],
  );
  return request.trackingToken;
}

const longer = async (pool: Pool, token: string) => {
  const view = (await trackingViewByToken(pool, token))!;
  return { flag: view.longerThanUsual, next: view.next, headline: view.headline.state };
};

let history: string[] = [];

test("past the 90th percentile of the step's settle times: said; just under it: not", async ({ db }) => {
  await registerDelivery(db.pool);
  history = await settledHistory(db.pool);
  const under = await longer(db.pool, await onPrepareFor(db.pool, 89));
  expect(under).toMatchObject({ flag: false, headline: "preparing", next: "It will be sent on shortly. Nothing is needed from you." });
  const past = await longer(db.pool, await onPrepareFor(db.pool, 93));
  expect(past).toMatchObject({ flag: true, headline: "preparing" });
  expect(past.next).toMatch(/^This is taking longer than usual to get started\. Nothing is needed from you/);
});

test("a step that usually settles in seconds is not late before the floor, and is after it", async ({ db }) => {
  const { floorSeconds } = LONGER_THAN_USUAL;
  expect((await longer(db.pool, await onReserveFor(db.pool, floorSeconds - 2))).flag).toBe(false);
  expect((await longer(db.pool, await onReserveFor(db.pool, floorSeconds + 2))).flag).toBe(true);
});

test("with too few settled in the last day nothing counts as usual, so nothing is said", async ({ db }) => {
  await db.pool.query(`UPDATE step SET completed_at = completed_at - interval '2 days' WHERE workflow_id = $1`, [history[0]]);
  expect((await longer(db.pool, await onReserveFor(db.pool, 300))).flag).toBe(false);
});

test("an ended request is never late", async ({ db }) => {
  await db.pool.query(`UPDATE step SET completed_at = completed_at + interval '2 days' WHERE workflow_id = $1`, [history[0]]);
  const token = await onPrepareFor(db.pool, 300);
  expect((await longer(db.pool, token)).flag).toBe(true);
  await db.pool.query(`UPDATE workflow SET status = 'cancelled' WHERE tracking_token = $1`, [token]);
  expect(await longer(db.pool, token)).toMatchObject({ flag: false, headline: "cancelled" });
});
