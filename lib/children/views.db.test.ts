/**
 * A parent step parked on its children is a waiting step like a timer or an event wait, as
 * engineers read it: the steps and requests lists show it waiting for children (how many have
 * ended, of how many) and filter by "waiting for children", and the waiting-steps metric counts it
 * under its room, as a series and in Prometheus, until the last child ends.
 */
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { z } from "zod";
import { listRequestsQuery } from "@/lib/api/contract/engineer/requests";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { metricsQuery } from "@/lib/api/contract/engineer/metrics";
import { createPool } from "@/lib/db/pool";
import { readTotals, renderExposition } from "@/lib/metrics/prometheus";
import { readMetrics, resolveRange } from "@/lib/metrics/series";
import { listRequests } from "@/lib/requests/list";
import { defineWorkflow, done } from "@/lib/sdk";
import { createTestEnvironment, type TestEnvironment } from "@/lib/sdk/testing";
import { listSteps } from "@/lib/steps/list";
import { WAITING_FOR } from "@/lib/waits/types";
import { waitRooms } from "@/lib/waits/rooms";
import { childrenOfRequest } from "./read";
import { until } from "./test-support";

const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });

/** A parcel that waits, with no timeout, for `parcel.arrived` with its name. */
const parcel = defineWorkflow({ kind: "view-parcel", version: 1, input: z.object({ parcel: z.string() }) }).event("arrive", {
  milestone: words("Waiting for the parcel"),
  name: "parcel.arrived",
  key: (ctx) => ctx.input.parcel,
});

/** Ships its parcels as children, then goes on. */
const order = defineWorkflow({ kind: "view-order", version: 1, input: z.object({ parcels: z.array(z.string()) }) })
  .children("ship", { milestone: words("Shipping"), workflow: parcel, each: (ctx) => ctx.input.parcels, input: (_ctx, name) => ({ parcel: name }) })
  .step("after", { dependsOn: ["ship"], milestone: words("Thanking"), run: async (ctx) => done({ completed: ctx.results.ship.completed }) });

let env: TestEnvironment;
let pool: pg.Pool;
beforeAll(async () => {
  // The kit's database on the test run's PostgreSQL server, rather than an embedded one of its own.
  process.env.DATABASE_URL ??= inject("databaseServerUrl");
  env = await createTestEnvironment({ workflows: [order, parcel] });
  pool = createPool(env.databaseUrl, { applicationName: "fenceline-test:children-views" });
});
afterAll(async () => {
  await pool?.end();
  await env?.close();
});

const stepsWaitingFor = async (waitingFor: string, workflow: string) =>
  (await listSteps(pool, listStepsQuery.parse({ waitingFor, workflow }))).items.map((item) => ({ name: item.name, wait: item.wait }));
const requestsWaitingFor = async (waitingFor: string) => (await listRequests(pool, listRequestsQuery.parse({ waitingFor }))).items.map((item) => item.id);

/** The waiting-steps metric now: its series' totals and key links, and its Prometheus lines. */
async function waitingStepsMetric() {
  const now = Date.now();
  const metrics = await readMetrics(pool, resolveRange(metricsQuery.parse({ from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 60_000).toISOString(), bucket: "1m" })));
  const series = metrics.waits.find((metric) => metric.id === "waiting_steps")!;
  const exposition = renderExposition(await readTotals(pool));
  return { total: series.total, level: series.points.at(-1)!.values, keyHrefs: series.keyHrefs, exposition };
}

describe("a step waiting for its children, as engineers read it", () => {
  test("every wait room has a word in the filter, and the filter's words are the rooms'", () => {
    expect(waitRooms.map((room) => room.record.waitingFor)).toEqual([...WAITING_FOR]);
  });

  test("the lists show it waiting for children with how many have ended, filter by it, and the metric counts it until the last child ends", async () => {
    const request = await env.createRequest(order, { parcels: ["a", "b", "c"] });
    const children = await until("three children waiting for their parcels", async () => {
      const found = await childrenOfRequest(pool, request.id);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM event_wait WHERE state = 'waiting' AND workflow_id = ANY($1::uuid[])`, [found.map((child) => child.requestId)]);
      return rows[0].n === 3 && found;
    });
    await env.sendEvent("parcel.arrived", "a", {});
    await env.waitForRequest(children[0]!.requestId, "completed");

    const { rows } = await pool.query(`SELECT armed_at FROM child_wait WHERE workflow_id = $1`, [request.id]);
    const summary = { waitingFor: "children", since: rows[0].armed_at.toISOString(), until: null, event: null, children: { ended: 1, total: 3 } };
    expect(await stepsWaitingFor("children", request.id)).toEqual([{ name: "ship", wait: summary }]);
    expect(await stepsWaitingFor("event", request.id)).toEqual([]);
    expect(await stepsWaitingFor("time", request.id)).toEqual([]);
    // The parent waits for children; the children that still wait, for their events.
    const waitingForChildren = await requestsWaitingFor("children");
    expect(waitingForChildren).toContain(request.id);
    expect(waitingForChildren).not.toContain(children[1]!.requestId);
    expect(await requestsWaitingFor("event")).not.toContain(request.id);
    expect(await requestsWaitingFor("event")).toContain(children[1]!.requestId);
    const listed = (await listRequests(pool, listRequestsQuery.parse({ q: request.id }))).items[0]!;
    expect(listed.steps.map((step) => [step.name, step.wait])).toEqual([["ship", summary], ["after", null]]);

    const waiting = await waitingStepsMetric();
    expect(waiting.total).toEqual({ timer: 0, event: 2, children: 1 });
    expect(waiting.level).toEqual({ timer: 0, event: 2, children: 1 });
    expect(waiting.keyHrefs).toMatchObject({ children: "/steps?waitingFor=children" });
    expect(waiting.exposition).toContain('fenceline_waits_waiting_steps{kind="children"} 1\n');

    await env.sendEvent("parcel.arrived", "b", {});
    await env.sendEvent("parcel.arrived", "c", {});
    await env.waitForRequest(request.id, "completed");
    expect(await stepsWaitingFor("children", request.id)).toEqual([]);
    expect(await requestsWaitingFor("children")).not.toContain(request.id);
    const ended = await waitingStepsMetric();
    expect(ended.total).toEqual({ timer: 0, event: 0, children: 0 });
    expect(ended.exposition).toContain('fenceline_waits_waiting_steps{kind="children"} 0\n');
  });
});
