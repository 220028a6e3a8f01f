/**
 * A child's end wakes the keepers (docs/decisions/030): the transaction that counts the last child
 * at its parent's wait notifies DUE_NOW_CHANNEL, and no earlier child's end does; a keeper that
 * would not look again for ten minutes settles the parent on that notice, so the parent's next
 * step is claimed without waiting for a keeper's look.
 */
import type { Pool } from "pg";
import { expect } from "vitest";
import { z } from "zod";
import { dbTest as test } from "@/lib/db/test-database";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow } from "@/lib/definitions/workflow";
import { DUE_NOW_CHANNEL } from "@/lib/engine/waits";
import { sendEvent } from "@/lib/events/send";
import { directCoordinator } from "@/lib/worker/direct-coordinator";
import { createRequestsOf, testWorker } from "@/lib/worker/test-support";
import { until } from "./test-support";

const plain = { upcoming: "Step", current: "Working on it", done: "Done" };

/**
 * A parcel that waits, with no timeout, for `parcel.arrived` with its name: it ends when the test
 * sends that. Its wait is due at no time, so parking it wakes no keeper.
 */
const parcelOf = (kind: string) =>
  defineWorkflow({ kind, version: 1, input: z.object({ parcel: z.string() }) }).event("arrive", {
    milestone: plain,
    name: `${kind}.arrived`,
    key: (ctx) => ctx.input.parcel,
  });

/** Ships its parcels as children, then goes on. */
const orderOf = (kind: string, parcel: ReturnType<typeof parcelOf>) =>
  defineWorkflow({ kind, version: 1, input: z.object({ parcels: z.array(z.string()) }) })
    .children("ship", {
      milestone: plain,
      workflow: parcel,
      each: (ctx) => ctx.input.parcels,
      input: (_ctx, parcel) => ({ parcel }),
      maxChildren: 10,
    })
    .step("after", { dependsOn: ["ship"], milestone: plain, run: async (ctx) => done({ completed: ctx.results.ship.completed }) });

/**
 * Starts a parent of `parcels` children under a worker whose keeper looks again every
 * `keeperLookAgainMs`, and returns once every child waits for its parcel and the keeper has gone
 * to sleep since: from then on only a notice wakes it before its next look.
 */
async function parentWaitingOnChildren(pool: Pool, kind: string, parcels: string[], keeperLookAgainMs?: number) {
  const parcel = parcelOf(`${kind}-parcel`);
  const order = orderOf(`${kind}-order`, parcel);
  const [request] = await createRequestsOf(pool, order, [{ parcels }]);
  let sleeps = 0;
  const coordinator = directCoordinator(pool, { keeperLookAgainMs, keeperAsleep: () => void (sleeps += 1) });
  await testWorker(pool, [order, parcel], { coordinator, concurrency: 4 }).start();
  await until("every child to wait for its parcel", async () => {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM event_wait e JOIN child_request c ON c.child_workflow_id = e.workflow_id WHERE c.parent_workflow_id = $1 AND e.state = 'waiting'`,
      [request!.workflowId],
    );
    return rows[0].n === parcels.length;
  });
  // Nothing the children did woke it (their waits are due at no time): asleep once it slept once.
  await until("the keeper to go to sleep", async () => sleeps > 0);
  const send = (name: string) => sendEvent(pool, { name: `${kind}-parcel.arrived`, key: name, payload: {}, sender: "test", idempotencyKey: null });
  return { request: request!, send };
}

test("the transaction that ends the last child notifies the keepers' channel; an earlier child's end does not", async ({ db }) => {
  const { send } = await parentWaitingOnChildren(db.pool, "notify", ["a", "b"]);
  const listener = await db.pool.connect();
  try {
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push(`${message.channel}:${message.payload}`));
    await listener.query(`LISTEN ${DUE_NOW_CHANNEL}`);
    // Notices arrive in commit order: a marker sent after each end shows which end sent what.
    const mark = async (name: string) => {
      await db.pool.query(`SELECT pg_notify($1, $2)`, [DUE_NOW_CHANNEL, name]);
      await until(`marker ${name}`, async () => heard.includes(`${DUE_NOW_CHANNEL}:${name}`));
    };
    expect((await send("a")).consumedBy).not.toBeNull();
    await mark("first-ended");
    expect((await send("b")).consumedBy).not.toBeNull();
    await mark("last-ended");
    expect(heard).toEqual([`${DUE_NOW_CHANNEL}:first-ended`, `${DUE_NOW_CHANNEL}:`, `${DUE_NOW_CHANNEL}:last-ended`]);
  } finally {
    await listener.query("UNLISTEN *");
    listener.release();
  }
});

test("a keeper asleep for ten minutes settles the parent on the last child's notice, and the parent's next step is claimed", async ({ db }) => {
  // The keeper went to sleep after the children parked; it asks again only after 25 s (the
  // worker's KEEPER_WAIT_MS) and would look again in ten minutes: only the notice wakes it sooner.
  const { request, send } = await parentWaitingOnChildren(db.pool, "wake", ["a", "b"], 600_000);
  await send("a");
  await send("b");
  await until(
    "the parent's next step to be claimed",
    async () => (await db.pool.query(`SELECT 1 FROM attempt a JOIN step s ON s.id = a.step_id WHERE s.workflow_id = $1 AND s.name = 'after'`, [request.workflowId])).rows.length > 0,
    10_000,
  );
  const { rows } = await db.pool.query(`SELECT state::text, children_ended FROM child_wait WHERE workflow_id = $1`, [request.workflowId]);
  expect(rows).toEqual([{ state: "ended", children_ended: 2 }]);
});
