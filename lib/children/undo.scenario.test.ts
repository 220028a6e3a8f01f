/**
 * Child requests and compensation together: a child whose workflow undoes its effects on cancel
 * is undoing (`cancelling`) before it is cancelled. Its parent counts it once, when its undo has
 * a receipt, not when the undoing begins (migration 20261208700000).
 */
import pg from "pg";
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, done, effect } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination, type TestEnvironment } from "@/lib/sdk/testing";

const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });
const labels = fakeDestination<{ parcel: string }>("idempotent", { name: "undo-labels" });
const voids = fakeDestination<{ label: string }>("idempotent", { name: "undo-voids" });

const parcel = defineWorkflow({ kind: "undo-parcel", version: 1, input: z.object({ parcel: z.string() }), compensateOn: "cancel" })
  .step("label", {
    adapter: labels.adapter,
    milestone: words("Printing the label"),
    run: async (ctx) => effect(await ctx.invoke({ parcel: ctx.input.parcel })),
    compensate: { adapter: voids.adapter, payload: ({ input }) => ({ label: input.parcel }), milestone: { current: "Voiding the label", done: "Label voided" } },
  })
  .event("picked-up", { dependsOn: ["label"], milestone: words("Waiting for the courier"), name: "courier.picked-up", key: (ctx) => ctx.input.parcel, payload: z.object({}) });

const shipment = defineWorkflow({ kind: "undo-shipment", version: 1, input: z.object({ parcels: z.array(z.string()) }) })
  .children("parcels", {
    milestone: { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" },
    workflow: parcel,
    each: (ctx) => ctx.input.parcels,
    input: (_ctx, name) => ({ parcel: name }),
    onChildFailure: "collect",
  })
  .step("dispatch", { dependsOn: ["parcels"], milestone: words("Dispatching"), run: async (ctx) => done({ failed: ctx.results.parcels.failed }) });

let env: TestEnvironment;
let db: pg.Pool;
beforeAll(async () => {
  env = await createTestEnvironment({ workflows: [shipment, parcel] });
  // The engine's tables are in schema `fenceline`.
  db = new pg.Pool({ connectionString: env.databaseUrl, max: 2, options: "-c search_path=fenceline" });
});
afterAll(async () => {
  await db?.end();
  await env?.close();
});

test("a child cancelled after its effect is undone first; its parent counts it once, after the undo's receipt", async () => {
  const request = await env.createRequest(shipment, { parcels: ["p-1", "p-2"] });
  const children = async () =>
    (await db.query<{ id: string; parcel: string }>(`SELECT w.id, w.input->>'parcel' AS parcel FROM child_request c JOIN workflow w ON w.id = c.child_workflow_id WHERE c.parent_workflow_id = $1 ORDER BY c.index`, [request.id])).rows;
  // Both children have printed their label and wait for the courier.
  await env.waitForStep(request.id, "parcels", "the children started", (detail) => detail.step.state === "waiting");
  const [first, second] = await children();
  for (const child of [first!, second!]) await env.waitForStep(child.id, "label", "the label printed", (detail) => detail.receipts.length === 1);

  await env.cancel(first!.id, "parcel lost before pick-up");
  await env.waitForRequest(first!.id, "cancelled");
  const undo = await env.step(first!.id, "label.undo");
  expect(undo.receipts).toHaveLength(1);
  // The parent's wait counted the child once, at its end, after the undo.
  const { rows } = await db.query<{ children_ended: number; children_failed: number; undone_at: Date; counted_at: Date }>(
    `SELECT cw.children_ended, cw.children_failed, r.created_at AS undone_at, c.ended_at AS counted_at
     FROM child_wait cw JOIN child_request c ON c.parent_step_id = cw.step_id AND c.child_workflow_id = $1
     JOIN receipt r ON r.step_id = $2
     WHERE cw.step_id = (SELECT parent_step_id FROM child_request WHERE child_workflow_id = $1)`,
    [first!.id, undo.step.id],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ children_ended: 1, children_failed: 1 });
  expect(rows[0]!.counted_at.getTime()).toBeGreaterThanOrEqual(rows[0]!.undone_at.getTime());

  await env.sendEvent("courier.picked-up", "p-2", {});
  await env.waitForRequest(request.id, "completed");
  expect((await env.step(request.id, "dispatch")).receipts[0]?.observedResult).toEqual({ failed: 1 });
});
