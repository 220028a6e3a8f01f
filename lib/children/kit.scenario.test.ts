/**
 * fenceline/testing with a child step: an adopter's test serves the parent and the child
 * workflows in one environment, drives the parent as any request, and reads the children's
 * results on the parent's step; a child its test fails (a fault at its destination) fails the
 * parent under `onChildFailure: "fail"`.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { defineWorkflow, done, effect } from "@/lib/sdk";
import { createTestEnvironment, fakeDestination, type TestEnvironment } from "@/lib/sdk/testing";

const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });
const labels = fakeDestination<{ parcel: string }>("idempotent", { name: "labels" });

const parcel = defineWorkflow({ kind: "kit-parcel", version: 1, input: z.object({ parcel: z.string() }) }).step("label", {
  adapter: labels.adapter,
  attemptBudget: 1,
  milestone: words("Printing the label"),
  run: async (ctx) => effect(await ctx.invoke({ parcel: ctx.input.parcel })),
});

const shipment = defineWorkflow({ kind: "kit-shipment", version: 1, input: z.object({ parcels: z.array(z.string()) }) })
  .children("parcels", {
    milestone: { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" },
    workflow: parcel,
    each: (ctx) => ctx.input.parcels,
    input: (_ctx, name) => ({ parcel: name }),
  })
  .step("dispatch", { dependsOn: ["parcels"], milestone: words("Dispatching"), run: async (ctx) => done({ children: ctx.results.parcels.completed }) });

let env: TestEnvironment;
beforeAll(async () => {
  env = await createTestEnvironment({ workflows: [shipment, parcel] });
});
afterAll(() => env?.close());

test("a shipment's parcels run as child requests in the test environment, and the parent reads their results", async () => {
  const request = await env.createRequest(shipment, { parcels: ["a", "b", "c"] });
  const done = await env.waitForRequest(request.id, "completed");
  expect(done.progress.headline.label).toBe("Completed");
  const ship = await env.step(request.id, "parcels");
  expect(ship.receipts[0]?.observedResult).toMatchObject({ completed: 3, failed: 0 });
  expect((await env.step(request.id, "dispatch")).receipts[0]?.observedResult).toEqual({ children: 3 });
});

test("a child that fails fails its parent step, naming the child", async () => {
  env.faults.definiteFailure({ adapter: "labels" }, { detail: "printer jammed" });
  const request = await env.createRequest(shipment, { parcels: ["x"] });
  const ended = await env.waitForRequest(request.id, ["failed", "completed"]);
  expect(ended.status).toBe("failed");
  expect((await env.step(request.id, "parcels")).step.stateReason).toMatch(/^child 1 of 1 \(kit-parcel@1, request [0-9a-f-]+\) could not be completed/);
});
